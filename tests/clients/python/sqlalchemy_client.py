"""SQLAlchemy 1.4 (Debian's python3-sqlalchemy, over psycopg2): the ORM
quickstart — declarative models, create_all (twice), Session CRUD, count(),
with_for_update(skip_locked=True), inspect().get_table_names(), drop_all."""
from sqlalchemy import Column, ForeignKey, Integer, String, create_engine, inspect, select
from sqlalchemy.orm import Session, declarative_base, relationship

from steps import run, check, table, url, finish

Base = declarative_base()
USERS, ADDRESSES = table("py_sa_user_account"), table("py_sa_address")


class User(Base):
    __tablename__ = USERS
    id = Column(Integer, primary_key=True)
    name = Column(String(30), nullable=False)
    fullname = Column(String)
    addresses = relationship("Address", back_populates="user", cascade="all, delete-orphan")


class Address(Base):
    __tablename__ = ADDRESSES
    id = Column(Integer, primary_key=True)
    email_address = Column(String, nullable=False)
    user_id = Column(Integer, ForeignKey(f"{USERS}.id"), nullable=False)
    user = relationship("User", back_populates="addresses")


u = url()
engine = create_engine("postgresql+psycopg2://" + u.split("://", 1)[1], future=True)


def connect():
    with engine.connect() as c:
        c.exec_driver_sql("SELECT 1")


def create_all():
    Base.metadata.create_all(engine)


def add_commit():
    with Session(engine) as s:
        s.add_all([
            User(name="spongebob", fullname="Spongebob Squarepants",
                 addresses=[Address(email_address="spongebob@sqlalchemy.org")]),
            User(name="sandy", fullname="Sandy Cheeks",
                 addresses=[Address(email_address="sandy@sqlalchemy.org"),
                            Address(email_address="sandy@squirrelpower.org")]),
            User(name="patrick", fullname="Patrick Star"),
        ])
        s.commit()


def select_where():
    with Session(engine) as s:
        names = s.scalars(select(User.name).where(User.name.in_(["spongebob", "sandy"])).order_by(User.name)).all()
        check("names", names, ["sandy", "spongebob"])


def join():
    with Session(engine) as s:
        q = select(Address.email_address).join(Address.user).where(User.name == "sandy").order_by(Address.email_address)
        check("emails", s.scalars(q).all(), ["sandy@sqlalchemy.org", "sandy@squirrelpower.org"])


def relationship_load():
    with Session(engine) as s:
        sandy = s.execute(select(User).filter_by(name="sandy")).scalar_one()
        check("addresses", sorted(a.email_address for a in sandy.addresses),
              ["sandy@sqlalchemy.org", "sandy@squirrelpower.org"])


def update():
    with Session(engine) as s:
        patrick = s.query(User).filter_by(name="patrick").one()
        patrick.fullname = "Patrick Starfish"
        s.commit()
        check("fullname", s.get(User, patrick.id).fullname, "Patrick Starfish")


def count():
    with Session(engine) as s:
        check("count", s.query(User).count(), 3)
        check("filtered count", s.query(Address).filter(Address.email_address.like("sandy%")).count(), 2)


def for_update_skip_locked():
    with Session(engine) as s1, Session(engine) as s2:
        first = s1.query(User).order_by(User.id).with_for_update(skip_locked=True).first()
        nxt = s2.query(User).order_by(User.id).with_for_update(skip_locked=True).first()
        if first is None or nxt is None or first.id == nxt.id:
            raise AssertionError(f"locked row not skipped: {first and first.id} {nxt and nxt.id}")
        s2.rollback()
        s1.rollback()


def delete():
    with Session(engine) as s:
        sandy = s.query(User).filter_by(name="sandy").one()
        s.delete(sandy)
        s.commit()
        check("users", s.query(User).count(), 2)
        check("addresses", s.query(Address).count(), 1)


def get_table_names():
    names = inspect(engine).get_table_names()
    missing = {USERS, ADDRESSES} - set(names)
    if missing:
        raise AssertionError(f"missing {sorted(missing)} from {names}")


def drop_all():
    Base.metadata.drop_all(engine)


if run("connect", connect):
    for name, fn in [("create_all", create_all), ("create_all_again", create_all),
                     ("add_commit", add_commit), ("select_where", select_where), ("join", join),
                     ("relationship_load", relationship_load), ("update", update), ("count", count),
                     ("for_update_skip_locked", for_update_skip_locked), ("delete", delete),
                     ("get_table_names", get_table_names), ("drop_all", drop_all)]:
        run(name, fn)
engine.dispose()
finish()
