// windforce runtime wrapper for bun and node (DESIGN §3 entry contract).
// It imports the pinned entrypoint, calls main(input, ctx) (or the default
// export), writes the return value as JSON to $WF_RESULT, and maps a throw
// to {"message","stack"} in $WF_ERROR with exit status 1.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const env = process.env;

// exit waits until stdout and stderr are written out (a full pipe makes
// writes asynchronous, and process.exit would drop them), then exits even
// if the job left timers or sockets open.
async function exit(code) {
  const drained = (s) => new Promise((resolve) => s.write("", resolve));
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}

async function fail(err) {
  const message = err instanceof Error ? err.message : String(err);
  const stack = err instanceof Error && err.stack ? String(err.stack) : "";
  writeFileSync(env.WF_ERROR, JSON.stringify({ message: message || "error", stack }));
  await exit(1);
}

try {
  const input = JSON.parse(readFileSync(env.WF_INPUT, "utf8"));
  const ctx = JSON.parse(readFileSync(env.WF_CTX, "utf8"));
  const mod = await import(pathToFileURL(env.WF_ENTRYPOINT).href);
  const fn = typeof mod.main === "function" ? mod.main
    : typeof mod.default === "function" ? mod.default : null;
  if (!fn) {
    throw new Error(`${ctx.entrypoint} exports neither main nor a default function`);
  }
  const out = await fn(input, ctx);
  const json = JSON.stringify(out === undefined ? null : out);
  writeFileSync(env.WF_RESULT, json === undefined ? "null" : json);
  await exit(0);
} catch (err) {
  await fail(err);
}
