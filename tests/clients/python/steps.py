"""Shared step runner for the client scripts in tests/clients/python.

Each script calls run(name, fn) per step; it prints "STEP <name> ok" or
"STEP <name> FAIL <error>" and finish() exits 1 when a step failed.
"""
import os
import sys

_failed = False


def run(name, fn):
    global _failed
    try:
        fn()
    except Exception as e:  # a failed step is reported, the script goes on
        _failed = True
        msg = " ".join(f"{type(e).__name__}: {e}".split())
        print(f"STEP {name} FAIL {msg}", flush=True)
        return False
    print(f"STEP {name} ok", flush=True)
    return True


def check(what, got, want):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def table(base):
    """A table name unique to this process."""
    return f"{base}_{os.getpid()}"


def url():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} postgres://user@host:port/db")
    return sys.argv[1]


def finish():
    sys.exit(1 if _failed else 0)
