"""windforce runtime wrapper for python (DESIGN §3 entry contract).

It loads the pinned entrypoint, calls main(input, ctx), writes the return
value as JSON to $WF_RESULT, and maps an exception to {"message","stack"}
in $WF_ERROR with exit status 1.
"""
import importlib.util
import inspect
import json
import os
import sys
import traceback


def run():
    env = os.environ
    with open(env["WF_INPUT"], encoding="utf-8") as f:
        data = json.load(f)
    with open(env["WF_CTX"], encoding="utf-8") as f:
        ctx = json.load(f)
    entry = env["WF_ENTRYPOINT"]
    sys.path.insert(0, os.path.dirname(entry))
    spec = importlib.util.spec_from_file_location("wf_entrypoint", entry)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, "main", None)
    if not callable(fn):
        raise RuntimeError(ctx["entrypoint"] + " defines no main(input, ctx) function")
    out = fn(data, ctx)
    if inspect.isawaitable(out):
        import asyncio
        out = asyncio.run(out)
    text = json.dumps(out)
    with open(env["WF_RESULT"], "w", encoding="utf-8") as f:
        f.write(text)


def main():
    sys.dont_write_bytecode = True
    try:
        run()
    except BaseException as err:  # noqa: BLE001 - every failure is reported
        message = str(err) or type(err).__name__
        if isinstance(err, SystemExit):
            message = "process exited with status " + str(err.code)
        with open(os.environ["WF_ERROR"], "w", encoding="utf-8") as f:
            json.dump({"message": message, "stack": traceback.format_exc()}, f)
        sys.stdout.flush()
        os._exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


main()
