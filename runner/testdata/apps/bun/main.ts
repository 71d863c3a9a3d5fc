// Conformance fixture for the bun runtime: ctx.action picks the case.
import { existsSync, writeFileSync, writeSync } from "node:fs";
import { spawn } from "node:child_process";

let runs = 0;

export async function main(input: any, ctx: any): Promise<unknown> {
  switch (ctx.action) {
    case "echo":
      console.log("out-1");
      console.error("err-2");
      console.log("out-3");
      return { echo: input, action: ctx.action, job: ctx.job_id === process.env.WF_JOB_ID, token: typeof ctx.token };
    case "throw":
      throw new Error("boom from bun");
    case "exit":
      process.exit(3);
    case "big":
      return "x".repeat(input.n);
    case "wrong":
      return { greeting: 5 };
    case "spam": {
      const line = "y".repeat(1023) + "\n";
      for (let i = 0; i < input.kb; i++) process.stdout.write(line);
      return { ok: true };
    }
    case "env":
      return Object.keys(process.env).sort();
    case "write":
      try { writeFileSync("main.ts", "overwritten"); return { wrote: true }; } catch { return { wrote: false }; }
    case "generation":
      return { generation: ctx.generation };
    case "count":
      // Module state: survives between jobs of one warm process.
      runs += 1;
      return { runs, pid: process.pid };
    case "getenv":
      return { token: process.env.WF_TOKEN ?? null, job: process.env.WF_JOB_ID ?? null, leak: process.env.LEAK ?? null };
    case "setenv":
      process.env.LEAK = input.value;
      return { ok: true };
    case "spawn": {
      // A child with a command line of the test's choosing, to find it
      // from the host; the job waits for it.
      console.log("started");
      const child = spawn("sleep", [String(input.seconds)], { stdio: "ignore" });
      await new Promise((resolve) => child.on("exit", resolve));
      return { slept: true };
    }
    case "orphan":
      spawn("sleep", [String(input.seconds)], { stdio: "ignore", detached: true }).unref();
      return { ok: true };
    case "segv":
      process.kill(process.pid, "SIGSEGV");
      await new Promise((resolve) => setTimeout(resolve, 5000));
      return { alive: true };
    case "mark": {
      // A file in /tmp and HOME: the next job must not find it.
      const found = ["/tmp/wf-mark", `${process.env.HOME}/wf-mark`].filter((p) => existsSync(p));
      writeFileSync("/tmp/wf-mark", "x");
      writeFileSync(`${process.env.HOME}/wf-mark`, "x");
      return { found };
    }
    case "forge":
      // Job code writing to the answer pipe itself (descriptor 6).
      writeSync(6, input.frame);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      return { forged: false };
    case "late":
      // Output right before the answer: it must land in this job's logs.
      for (let i = 0; i < input.n; i++) console.log(`late-${input.tag}-${i}`);
      return { ok: true };
    case "token":
      console.log(`token is ${ctx.token} ok`);
      return { ok: true };
  }
  throw new Error(`unknown action ${ctx.action}`);
}
