"""Conformance fixture for the python runtime."""
import os
import signal
import subprocess
import sys

runs = 0
hog = None


def main(input, ctx):
    action = ctx["action"]
    if action == "echo":
        print("out-1")
        print("err-2", file=sys.stderr)
        print("out-3")
        return {"echo": input, "action": action, "job": ctx["job_id"] == os.environ["WF_JOB_ID"],
                "token": type(ctx["token"]).__name__ == "str" and "string"}
    if action == "throw":
        raise ValueError("boom from python")
    if action == "exit":
        sys.exit(3)
    if action == "big":
        return "x" * input["n"]
    if action == "wrong":
        return {"greeting": 5}
    if action == "spam":
        line = "y" * 1023 + "\n"
        for _ in range(input["kb"]):
            sys.stdout.write(line)
        return {"ok": True}
    if action == "env":
        return sorted(os.environ.keys())
    if action == "write":
        try:
            with open("main.py", "w") as f:
                f.write("overwritten")
            return {"wrote": True}
        except OSError:
            return {"wrote": False}
    if action == "count":
        # Module state: survives between jobs of one warm process.
        global runs
        runs += 1
        return {"runs": runs, "pid": os.getpid()}
    if action == "hog":
        # Module state holding memory past the job.
        global hog
        hog = b"\x01" * input["bytes"]
        return {"ok": True}
    if action == "getenv":
        return {"token": os.environ.get("WF_TOKEN"), "job": os.environ.get("WF_JOB_ID"), "leak": os.environ.get("LEAK")}
    if action == "setenv":
        os.environ["LEAK"] = input["value"]
        return {"ok": True}
    if action == "spawn":
        print("started", flush=True)
        subprocess.run(["sleep", str(input["seconds"])], check=False)
        return {"slept": True}
    if action == "orphan":
        subprocess.Popen(["sleep", str(input["seconds"])], start_new_session=True)
        return {"ok": True}
    if action == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
        return {"alive": True}
    if action == "exit_hard":
        os._exit(3)
    if action == "mark":
        # A file in /tmp and HOME: the next job must not find it.
        paths = ["/tmp/wf-mark", os.environ["HOME"] + "/wf-mark"]
        found = [p for p in paths if os.path.exists(p)]
        for p in paths:
            with open(p, "w") as f:
                f.write("x")
        return {"found": found}
    if action == "late":
        for i in range(input["n"]):
            print("late-%s-%d" % (input["tag"], i))
        return {"ok": True}
    if action == "token":
        print("token is " + ctx["token"] + " ok")
        return {"ok": True}
    raise RuntimeError("unknown action " + action)
