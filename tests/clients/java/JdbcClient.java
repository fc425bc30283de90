// JDBC (Debian's libpostgresql-jdbc-java) as an application uses it:
// prepared statements with varchar and smallint parameters, executeBatch,
// generated keys, transactions, DatabaseMetaData.getTables/getColumns.
// Prints "STEP <name> ok" or "STEP <name> FAIL <error>" per step and exits
// 1 when one failed.
//
//   java -cp /usr/share/java/postgresql.jar JdbcClient.java postgres://user@host:port/db
import java.net.URI;
import java.sql.*;
import java.util.*;

public class JdbcClient {
    interface Step { void run() throws Exception; }

    static boolean failed = false;
    static Connection conn;
    static final String T = "java_jdbc_items_" + ProcessHandle.current().pid();

    static boolean step(String name, Step s) {
        try {
            s.run();
            System.out.println("STEP " + name + " ok");
            return true;
        } catch (Throwable e) {
            failed = true;
            String msg = (e.getClass().getSimpleName() + ": " + e.getMessage()).replaceAll("\\s+", " ");
            System.out.println("STEP " + name + " FAIL " + msg);
            try {
                if (conn != null && !conn.isClosed() && !conn.getAutoCommit()) {
                    conn.rollback();
                    conn.setAutoCommit(true);
                }
            } catch (SQLException ignored) {
            }
            return false;
        }
    }

    static void check(String what, Object got, Object want) {
        if (!Objects.equals(got, want)) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: java JdbcClient.java postgres://user@host:port/db");
            System.exit(2);
        }
        URI u = new URI(args[0]);
        String user = u.getUserInfo() == null ? "postgres" : u.getUserInfo().split(":")[0];
        String jdbc = "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath();
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("sslmode", "disable");
        props.setProperty("connectTimeout", "10");
        props.setProperty("socketTimeout", "30");
        if (!step("connect", () -> conn = DriverManager.getConnection(jdbc, props))) {
            System.exit(1);
        }
        step("create_table", () -> {
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE " + T + " (id serial PRIMARY KEY, code varchar(20) NOT NULL, qty smallint, note text)");
            }
        });
        List<Integer> keys = new ArrayList<>();
        step("insert_generated_keys", () -> {
            try (PreparedStatement ps = conn.prepareStatement(
                    "INSERT INTO " + T + " (code, qty, note) VALUES (?, ?, ?)", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "A-1");
                ps.setShort(2, (short) 3);
                ps.setString(3, "first");
                check("updated", ps.executeUpdate(), 1);
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    rs.next();
                    keys.add(rs.getInt("id"));
                }
            }
        });
        step("execute_batch", () -> {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + T + " (code, qty) VALUES (?, ?)")) {
                for (int i = 0; i < 20; i++) {
                    ps.setString(1, "B-" + i);
                    ps.setShort(2, (short) i);
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                check("batch size", counts.length, 20);
                for (int c : counts) {
                    if (c != 1 && c != Statement.SUCCESS_NO_INFO) throw new AssertionError("count " + c);
                }
            }
            conn.commit();
            conn.setAutoCommit(true);
        });
        step("prepared_varchar_smallint", () -> {
            // Past prepareThreshold (5) the driver switches to a named
            // server-side statement: run it often enough to get there.
            try (PreparedStatement ps = conn.prepareStatement("SELECT code, qty FROM " + T + " WHERE code = ? AND qty >= ?")) {
                for (int i = 0; i < 8; i++) {
                    ps.setString(1, "B-" + (i + 10));
                    ps.setShort(2, (short) 10);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) throw new AssertionError("no row for B-" + (i + 10));
                        check("code", rs.getString(1), "B-" + (i + 10));
                        check("qty", rs.getShort(2), (short) (i + 10));
                    }
                }
            }
        });
        step("result_metadata", () -> {
            try (PreparedStatement ps = conn.prepareStatement("SELECT id, code, qty, note FROM " + T + " WHERE id = ?")) {
                ps.setInt(1, keys.get(0));
                try (ResultSet rs = ps.executeQuery()) {
                    ResultSetMetaData md = rs.getMetaData();
                    check("types", List.of(md.getColumnTypeName(1), md.getColumnTypeName(2), md.getColumnTypeName(3), md.getColumnTypeName(4)),
                            List.of("serial", "varchar", "int2", "text"));
                    rs.next();
                    check("note", rs.getString("note"), "first");
                }
            }
        });
        step("null_parameter", () -> {
            try (PreparedStatement ps = conn.prepareStatement("UPDATE " + T + " SET note = ? WHERE code = ?")) {
                ps.setNull(1, Types.VARCHAR);
                ps.setString(2, "A-1");
                check("updated", ps.executeUpdate(), 1);
            }
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery("SELECT note FROM " + T + " WHERE code = 'A-1'")) {
                rs.next();
                check("note", rs.getString(1), null);
                check("wasNull", rs.wasNull(), true);
            }
        });
        step("transaction_rollback", () -> {
            conn.setAutoCommit(false);
            try (Statement st = conn.createStatement()) {
                st.executeUpdate("DELETE FROM " + T);
            }
            conn.rollback();
            conn.setAutoCommit(true);
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM " + T)) {
                rs.next();
                check("count", rs.getLong(1), 21L);
            }
        });
        step("get_tables", () -> {
            DatabaseMetaData md = conn.getMetaData();
            try (ResultSet rs = md.getTables(null, null, T, new String[]{"TABLE"})) {
                if (!rs.next()) throw new AssertionError("getTables found no " + T);
                check("TABLE_NAME", rs.getString("TABLE_NAME"), T);
                check("TABLE_SCHEM", rs.getString("TABLE_SCHEM"), "public");
            }
        });
        step("get_columns", () -> {
            DatabaseMetaData md = conn.getMetaData();
            List<String> cols = new ArrayList<>();
            try (ResultSet rs = md.getColumns(null, "public", T, null)) {
                while (rs.next()) {
                    cols.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME") + ":" + rs.getInt("NULLABLE"));
                }
            }
            check("columns", cols, List.of("id:serial:0", "code:varchar:0", "qty:int2:1", "note:text:1"));
        });
        step("drop_table", () -> {
            try (Statement st = conn.createStatement()) {
                st.execute("DROP TABLE " + T);
            }
        });
        conn.close();
        System.exit(failed ? 1 : 0);
    }
}
