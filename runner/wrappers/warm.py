"""windforce warm runtime wrapper for python (DESIGN §7, runner/warm.go).

It loads the pinned entrypoint once, then serves one job at a time: a
request line (JSON: seq, fence, input, ctx, env) comes on descriptor 5,
the job runs with its env set over the process's own, and the answer goes
on descriptor 6 as a frame "result|error SEQ BYTES\\n" + BYTES of JSON.
Before each answer the wrapper writes the job's fence to stdout after
everything the job printed, so the worker knows where the job's output
ends. Between jobs nothing runs: the wrapper blocks reading the next
request, with the env put back as it was at start.
"""
import importlib.util
import inspect
import json
import os
import sys
import traceback

REQUESTS = 5
ANSWERS = 6


def send(kind, seq, payload):
    body = payload.encode("utf-8")
    data = ("%s %d %d\n" % (kind, seq, len(body))).encode("ascii") + body
    while data:
        data = data[os.write(ANSWERS, data):]


def fenced(fence):
    sys.stdout.flush()
    sys.stderr.flush()
    data = fence.encode("utf-8")
    while data:
        data = data[os.write(1, data):]


def error_json(err):
    message = str(err) or type(err).__name__
    if isinstance(err, SystemExit):
        message = "process exited with status " + str(err.code)
    stack = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return json.dumps({"message": message, "stack": stack})


class Requests:
    """Request lines from the worker; None when it closed the pipe."""

    def __init__(self):
        self.pending = b""

    def next(self):
        while True:
            i = self.pending.find(b"\n")
            if i >= 0:
                line, self.pending = self.pending[:i], self.pending[i + 1:]
                return json.loads(line)
            chunk = os.read(REQUESTS, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk


def load(entry):
    sys.path.insert(0, os.path.dirname(entry))
    spec = importlib.util.spec_from_file_location("wf_entrypoint", entry)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, "main", None)
    if not callable(fn):
        raise RuntimeError(os.path.relpath(entry) + " defines no main(input, ctx) function")
    return fn


def call(fn, data, ctx):
    out = fn(data, ctx)
    if inspect.isawaitable(out):
        import asyncio
        out = asyncio.run(out)
    return json.dumps(out)


def set_env(base, extra, cwd):
    """Puts the env and working directory back as they were at start, plus extra."""
    if os.getcwd() != cwd:
        os.chdir(cwd)
    os.environ.clear()
    os.environ.update(base)
    os.environ.update(extra)


def main():
    sys.dont_write_bytecode = True
    start_fence = os.environ.pop("WF_START_FENCE", "")
    try:
        fn = load(os.environ["WF_ENTRYPOINT"])
    except BaseException as err:  # noqa: BLE001 - every failure is reported
        fenced(start_fence)
        send("error", 0, error_json(err))
        os._exit(1)
    fenced(start_fence)
    base = dict(os.environ)
    cwd = os.getcwd()
    send("ready", 0, "")
    requests = Requests()
    while True:
        req = requests.next()
        if req is None:
            os._exit(0)
        set_env(base, req["env"], cwd)
        try:
            kind, payload = "result", call(fn, req["input"], req["ctx"])
        except BaseException as err:  # noqa: BLE001 - every failure is reported
            kind, payload = "error", error_json(err)
        set_env(base, {}, cwd)
        fenced(req["fence"])
        send(kind, req["seq"], payload)


main()
