// windforce warm runtime wrapper for bun and node (DESIGN §7, runner/warm.go).
// It imports the pinned entrypoint once, then serves one job at a time:
// a request line (JSON: seq, fence, input, ctx, env) comes on descriptor 5,
// the job runs with its env set over the process's own, and the answer
// goes on descriptor 6 as a frame "result|error SEQ BYTES\n" + BYTES of
// JSON. Before each answer the wrapper writes the job's fence to stdout
// after everything the job printed, so the worker knows where the job's
// output ends. Between jobs nothing runs: the wrapper blocks reading the
// next request, with the env put back as it was at start.
import { readSync, writeSync } from "node:fs";
import { relative } from "node:path";
import { pathToFileURL } from "node:url";

const REQUESTS = 5;
const ANSWERS = 6;

const base = { ...process.env };
const cwd = process.cwd();

// setEnv puts the process env and working directory back as they were
// at start, plus vars.
function setEnv(vars) {
  if (process.cwd() !== cwd) process.chdir(cwd);
  for (const k of Object.keys(process.env)) {
    if (!(k in base)) delete process.env[k];
  }
  for (const [k, v] of Object.entries(base)) process.env[k] = v;
  for (const [k, v] of Object.entries(vars || {})) process.env[k] = v;
}

const chunk = Buffer.alloc(1 << 16);
let pending = Buffer.alloc(0);

// readRequest blocks until the next request line; null when the worker
// closed the pipe (the process is being retired).
function readRequest() {
  for (let from = 0; ; ) {
    const i = pending.indexOf(10, from);
    if (i >= 0) {
      const line = pending.toString("utf8", 0, i);
      pending = pending.subarray(i + 1);
      return JSON.parse(line);
    }
    from = pending.length;
    const n = readSync(REQUESTS, chunk, 0, chunk.length, null);
    if (n === 0) return null;
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

// send writes one answer frame whole (a blocking pipe of our own).
function send(kind, seq, payload) {
  const body = Buffer.from(payload, "utf8");
  let buf = Buffer.concat([Buffer.from(`${kind} ${seq} ${body.length}\n`), body]);
  while (buf.length > 0) buf = buf.subarray(writeSync(ANSWERS, buf));
}

// flushed resolves once stdout and stderr are written out, then writes
// the fence after them (both are one pipe: it lands after all output).
async function fenced(fence) {
  const drained = (s, text) => new Promise((resolve) => s.write(text, resolve));
  await Promise.all([drained(process.stdout, ""), drained(process.stderr, "")]);
  await drained(process.stdout, fence);
}

function errorJSON(err) {
  const message = err instanceof Error ? err.message : String(err);
  const stack = err instanceof Error && err.stack ? String(err.stack) : "";
  return JSON.stringify({ message: message || "error", stack });
}

let fn;
try {
  const mod = await import(pathToFileURL(process.env.WF_ENTRYPOINT).href);
  fn = typeof mod.main === "function" ? mod.main
    : typeof mod.default === "function" ? mod.default : null;
  if (!fn) {
    throw new Error(`${relative(process.cwd(), process.env.WF_ENTRYPOINT)} exports neither main nor a default function`);
  }
} catch (err) {
  await fenced(process.env.WF_START_FENCE);
  send("error", 0, errorJSON(err));
  process.exit(1);
}
await fenced(process.env.WF_START_FENCE);
delete base.WF_START_FENCE;
setEnv(null);
send("ready", 0, "");

for (;;) {
  const req = readRequest();
  if (req === null) process.exit(0);
  setEnv(req.env);
  let kind = "result";
  let payload;
  try {
    const out = await fn(req.input, req.ctx);
    const json = JSON.stringify(out === undefined ? null : out);
    payload = json === undefined ? "null" : json;
  } catch (err) {
    kind = "error";
    payload = errorJSON(err);
  }
  setEnv(null);
  await fenced(req.fence);
  send(kind, req.seq, payload);
}
