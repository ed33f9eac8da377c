"""A warm Python for the suite: the scripts the tests run start in a fork of an interpreter that has
imported MindSpore already, instead of importing it again each time.

Why: `import mindspore` costs about 2.5 s of CPU; a tiny training run after it takes about 1 s. The
suite starts several hundred scripts, so a fresh interpreter for each was more than half of
`make test`. The standard library has no fork server for arbitrary command lines (multiprocessing's
runs Process targets), hence this file.

How: `python tests/warm.py serve SOCKET` imports MindSpore and waits. `shim(...)` writes an executable
`python` that tests use in place of sys.executable: it sends its argv, cwd, environment and its
stdin/stdout/stderr (SCM_RIGHTS) to the server, which forks; the child takes them over and runs the
script, `-m module` or `-c code` as Python would (sys.argv, sys.path with PYTHONPATH, sitecustomize
from PYTHONPATH: parity's observer). The shim relays signals to the child and exits as it exits (by
the same signal if it was killed); when the shim itself is killed (-9, a timeout), the server kills the
child. Anything else on the command line (`-m venv`, flags) runs in a real interpreter (exec).

Not the same as a fresh process: the child shares the server's hash seed and sys.flags, and modules
imported at start-up are not imported again. The README's commands, the examples as shipped, and every
test that passes sys.executable still start real interpreters; MSCODEGEN_TEST_COLD=1 makes the shim's
callers use sys.executable too.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import resource
import runpy
import selectors
import signal
import socket
import sys
import threading
import traceback

PRELOAD = (
    "mindspore",
    "mindspore.dataset",
    "mindspore.dataset.vision",
    "mindspore.train",
    "sklearn.datasets",
)
HANDLED_OPTIONS = ("-u", "-B")
LIMITS = ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_AS", "RLIMIT_CPU")

SHIM = """#!{python} -S
import json, os, resource, signal, socket, sys, time
argv = sys.argv[1:]
while argv[:1] and argv[0] in {options!r}:
    argv = argv[1:]
if not argv or (argv[0].startswith("-") and argv[0] not in ("-m", "-c")) or argv[:2] in (["-m", "venv"], ["-m", "pip"]):
    os.execv({python!r}, [{python!r}, *sys.argv[1:]])
for _ in range(1200):  # the server may still be importing MindSpore; without one, a real interpreter
    if os.path.exists({socket!r}):
        break
    time.sleep(0.1)
else:
    os.execv({python!r}, [{python!r}, *sys.argv[1:]])
conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
conn.connect({socket!r})
limits = {{name: resource.getrlimit(getattr(resource, name)) for name in {limits!r}}}  # e.g. a test's file size limit
request = {{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ), "shim": sys.argv[0], "limits": limits}}
socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
child = int(conn.recv(64))
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT):
    signal.signal(number, lambda number, frame: os.kill(child, number))
status = int(conn.recv(64) or b"1")
if status < 0:
    if -status != signal.SIGKILL:
        signal.signal(-status, signal.SIG_DFL)
    os.kill(os.getpid(), -status)
sys.exit(status)
"""


def shim(directory: str, server_socket: str) -> str:
    """Write the shim as DIRECTORY/python (executable) and return its path."""
    path = os.path.join(directory, "python")
    with open(path, "w") as out:
        out.write(
            SHIM.format(python=sys.executable, socket=server_socket, options=HANDLED_OPTIONS, limits=LIMITS)
        )
    os.chmod(path, 0o755)
    return path


def serve(path: str) -> None:
    """Import MindSpore, then fork a child per request until stdin closes (the suite's end)."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    base_path = [p for p in sys.path[1:] if p not in os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # clients wait for the name: it appears once the server listens
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "quit")
    running: dict[int, tuple[socket.socket, int]] = {}  # pidfd -> (the shim's connection, the child)
    while True:
        for key, _ in selector.select():
            if key.data == "quit":
                for _conn, pid in running.values():
                    os.kill(pid, signal.SIGKILL)
                return
            if key.data == "accept":
                _start(listener, selector, running, base_path)
            elif key.data == "exit":
                _report_exit(key.fd, selector, running)
            else:  # the shim's end closed while its child runs: it was killed, so is the child
                conn, pid = running[key.data]
                selector.unregister(conn)
                os.kill(pid, signal.SIGKILL)


def _start(
    listener: socket.socket, selector: selectors.BaseSelector, running: dict, base_path: list[str]
) -> None:
    """Fork the child of one request; it never returns here."""
    conn, _ = listener.accept()
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        selector.close()
        listener.close()
        _child(json.loads(message), fds, base_path)
    for fd in fds:
        os.close(fd)
    conn.send(str(pid).encode())
    pidfd = os.pidfd_open(pid)
    running[pidfd] = (conn, pid)
    selector.register(pidfd, selectors.EVENT_READ, "exit")
    selector.register(conn, selectors.EVENT_READ, pidfd)


def _report_exit(pidfd: int, selector: selectors.BaseSelector, running: dict) -> None:
    """Send a finished child's exit status (-N: killed by signal N) to its shim."""
    conn, pid = running.pop(pidfd)
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    selector.unregister(pidfd)
    os.close(pidfd)
    if conn.fileno() in selector.get_map():
        selector.unregister(conn)
    with contextlib.suppress(OSError):  # the shim may be gone
        conn.send(str(code).encode())
    conn.close()


def _child(request: dict, fds: list[int], base_path: list[str]) -> None:
    """Become the process the shim's command line describes, run it, then exit as Python would."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for name, limit in request["limits"].items():
        if tuple(limit) != resource.getrlimit(getattr(resource, name)):
            resource.setrlimit(getattr(resource, name), tuple(limit))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    argv = request["argv"]
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    while argv[0] in HANDLED_OPTIONS:
        unbuffered |= argv[0] == "-u"
        argv = argv[1:]
    sys.stdout.reconfigure(line_buffering=os.isatty(1), write_through=unbuffered)
    sys.stderr.reconfigure(line_buffering=True, write_through=unbuffered)
    if argv[0] == "-c":
        first, sys.argv = "", ["-c", *argv[2:]]
    elif argv[0] == "-m":
        first, sys.argv = os.getcwd(), [argv[1], *argv[2:]]
    else:
        first, sys.argv = os.path.dirname(os.path.abspath(argv[0])), argv
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [first, *extra, *base_path]
    sys.executable = request["shim"]  # what the script starts goes through the server too
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    code = _run(argv)
    # Python's shutdown but the teardown of every module (0.6 s with MindSpore, for nothing here)
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _run(argv: list[str]) -> int:
    """Run `-c CODE`, `-m MODULE` or `SCRIPT`; the exit code Python would give, its traceback printed."""
    try:
        with contextlib.suppress(ImportError):
            import sitecustomize  # noqa: F401  (parity's observer, from PYTHONPATH, as at start-up)
        if argv[0] == "-c":
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        elif argv[0] == "-m":
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in (
            __file__,
            runpy.__file__,
            "<frozen runpy>",
        ):
            tb = tb.tb_next  # the traceback starts in the script, as Python prints it
        sys.excepthook(type(exc), exc, tb)  # the script's own, if it set one
        return 1
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    serve(sys.argv[2])
