// Conformance fixture for the bun runtime: ctx.action picks the case.
import { writeFileSync } from "node:fs";

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
    case "token":
      console.log(`token is ${ctx.token} ok`);
      return { ok: true };
  }
  throw new Error(`unknown action ${ctx.action}`);
}
