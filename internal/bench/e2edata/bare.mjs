// The bare side of `windforce bench --e2e`: what the runtime wrapper
// (runner/wrappers/wrapper.mjs) does for one job, without windforce around
// it. Read the input and ctx files, import the entrypoint, call main, write
// the result as JSON, wait for stdout and stderr to drain, exit.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const env = process.env;

async function exit(code) {
  const drained = (s) => new Promise((resolve) => s.write("", resolve));
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}

try {
  const input = JSON.parse(readFileSync(env.WF_INPUT, "utf8"));
  const ctx = JSON.parse(readFileSync(env.WF_CTX, "utf8"));
  const mod = await import(pathToFileURL(env.WF_ENTRYPOINT).href);
  const fn = typeof mod.main === "function" ? mod.main : mod.default;
  const out = await fn(input, ctx);
  writeFileSync(env.WF_RESULT, JSON.stringify(out === undefined ? null : out));
  await exit(0);
} catch (err) {
  writeFileSync(env.WF_ERROR, JSON.stringify({ message: String(err && err.message || err) }));
  await exit(1);
}
