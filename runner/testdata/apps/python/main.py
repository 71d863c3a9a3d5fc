"""Conformance fixture for the python runtime."""
import os
import sys


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
    if action == "token":
        print("token is " + ctx["token"] + " ok")
        return {"ok": True}
    raise RuntimeError("unknown action " + action)
