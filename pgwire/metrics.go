package pgwire

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tupled/tupled"
)

// Metrics are the server's Prometheus metrics. A nil *Metrics records nothing.
type Metrics struct {
	conns      prometheus.Gauge
	connsTotal prometheus.Counter
	rejects    prometheus.Counter
	tlsConns   prometheus.Counter
	tlsErrors  prometheus.Counter
	noTLS      prometheus.Counter
	errors     *prometheus.CounterVec
	stmts      prometheus.Histogram
	panics     prometheus.Counter
	acceptErrs prometheus.Counter
}

// NewMetrics registers the server's metrics, and a collector of db.Stats()
// and db.Locks(), with reg.
func NewMetrics(reg prometheus.Registerer, db *tupled.DB) *Metrics {
	m := &Metrics{
		conns:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "tupled_connections", Help: "Client sessions currently established."}),
		connsTotal: prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_connections_total", Help: "Client sessions established since start."}),
		rejects:    prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_connections_rejected_total", Help: "Connections refused with 53300 (too many clients)."}),
		tlsConns:   prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_connections_tls_total", Help: "Client sessions established over TLS since start."}),
		tlsErrors:  prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_tls_handshake_errors_total", Help: "TLS handshakes that failed (the connection was closed)."}),
		noTLS:      prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_connections_without_tls_refused_total", Help: "Connections refused with 28000 because TLS is required and they did not use it."}),
		errors:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tupled_statement_errors_total", Help: "Failed statements (each aborts its transaction) by SQLSTATE."}, []string{"sqlstate"}),
		stmts: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tupled_statement_duration_seconds", Help: "Statement execution time, lock waits included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		panics:     prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_connection_panics_total", Help: "Connections ended by a recovered panic (FATAL XX000; the stack is in the log)."}),
		acceptErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "tupled_accept_errors_total", Help: "Failed accepts that were retried after a back-off (EMFILE, ENFILE, ...)."}),
	}
	reg.MustRegister(m.conns, m.connsTotal, m.rejects, m.tlsConns, m.tlsErrors, m.noTLS, m.errors, m.stmts, m.panics, m.acceptErrs, &statsCollector{db: db})
	return m
}

func (m *Metrics) connOpened(overTLS bool) {
	if m != nil {
		m.conns.Inc()
		m.connsTotal.Inc()
		if overTLS {
			m.tlsConns.Inc()
		}
	}
}

func (m *Metrics) panicked() {
	if m != nil {
		m.panics.Inc()
	}
}

func (m *Metrics) acceptFailed() {
	if m != nil {
		m.acceptErrs.Inc()
	}
}

func (m *Metrics) tlsHandshakeFailed() {
	if m != nil {
		m.tlsErrors.Inc()
	}
}

func (m *Metrics) refusedNoTLS() {
	if m != nil {
		m.noTLS.Inc()
	}
}

func (m *Metrics) connClosed() {
	if m != nil {
		m.conns.Dec()
	}
}

func (m *Metrics) rejected() {
	if m != nil {
		m.rejects.Inc()
	}
}

func (m *Metrics) statementError(code string) {
	if m != nil {
		m.errors.WithLabelValues(code).Inc()
	}
}

func (m *Metrics) statement(d time.Duration) {
	if m != nil {
		m.stmts.Observe(d.Seconds())
	}
}

// statsCollector exports db.Stats() counters and the current lock waits.
type statsCollector struct{ db *tupled.DB }

var (
	descCommits     = prometheus.NewDesc("tupled_commits_total", "Committed transactions.", nil, nil)
	descAborts      = prometheus.NewDesc("tupled_aborts_total", "Aborted transactions.", nil, nil)
	descLockWaits   = prometheus.NewDesc("tupled_lock_waits_total", "Lock requests that had to wait.", nil, nil)
	descWaiting     = prometheus.NewDesc("tupled_lock_waiters", "Lock requests waiting now.", nil, nil)
	descWaitSeconds = prometheus.NewDesc("tupled_lock_wait_seconds", "Summed time the lock requests waiting now have waited so far.", nil, nil)
	descDLChecks    = prometheus.NewDesc("tupled_deadlock_checks_total", "Deadlock checks run.", nil, nil)
	descDeadlocks   = prometheus.NewDesc("tupled_deadlocks_total", "Deadlocks found (victims aborted with 40P01).", nil, nil)
	descMulti       = prometheus.NewDesc("tupled_multixacts_created_total", "Multixacts created.", nil, nil)
	descRowLocks    = prometheus.NewDesc("tupled_row_locks_total", "Row locks taken, by where they were recorded.", []string{"kind"}, nil)
	descFsyncs      = prometheus.NewDesc("tupled_wal_fsyncs_total", "WAL fsyncs.", nil, nil)
	descWALRecords  = prometheus.NewDesc("tupled_wal_records_total", "WAL records written.", nil, nil)
	descCheckpoints = prometheus.NewDesc("tupled_checkpoints_total", "Checkpoints.", nil, nil)
	descTuplesLive  = prometheus.NewDesc("tupled_tuples_live", "Tuple versions in the heap.", nil, nil)
	descMultiLive   = prometheus.NewDesc("tupled_multixacts_live", "Multixacts not yet reclaimed.", nil, nil)
	descVacuumRuns  = prometheus.NewDesc("tupled_vacuum_runs_total", "Vacuum runs.", nil, nil)
	allStatsDescs   = []*prometheus.Desc{descCommits, descAborts, descLockWaits, descWaiting, descWaitSeconds, descDLChecks, descDeadlocks, descMulti, descRowLocks, descFsyncs, descWALRecords, descCheckpoints, descTuplesLive, descMultiLive, descVacuumRuns}
)

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allStatsDescs {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.db.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter(descCommits, s.Commits)
	counter(descAborts, s.Aborts)
	counter(descLockWaits, s.LockWaits)
	counter(descDLChecks, s.DeadlockChecks)
	counter(descDeadlocks, s.DeadlocksFound)
	counter(descMulti, s.MultiXactsCreated)
	counter(descRowLocks, s.LocksSingleXid, "single_xid")
	counter(descRowLocks, s.LocksMultiXact, "multixact")
	counter(descFsyncs, s.WALFsyncs)
	counter(descWALRecords, s.WALRecords)
	counter(descCheckpoints, s.Checkpoints)
	counter(descVacuumRuns, s.VacuumRuns)
	gauge(descTuplesLive, float64(s.TuplesLive))
	gauge(descMultiLive, float64(s.MultiXactsLive))
	now := time.Now()
	waiting, secs := 0, 0.0
	for _, l := range c.db.Locks() {
		if !l.Granted {
			waiting++
			if !l.WaitStart.IsZero() {
				secs += now.Sub(l.WaitStart).Seconds()
			}
		}
	}
	gauge(descWaiting, float64(waiting))
	gauge(descWaitSeconds, secs)
}
