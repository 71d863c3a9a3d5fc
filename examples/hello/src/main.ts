// The hello app: one entrypoint, ctx.action picks the branch. Each action's
// return value, as JSON, is the job's result; a throw fails the job with
// its message. No dependencies: it runs on bun (and node) as it is.

type Ctx = { action: string; job_id?: string; attempt?: number };

export async function main(input: any, ctx: Ctx): Promise<unknown> {
  switch (ctx.action) {
    case "greet":
      return greet(input);
    case "sleep":
      return sleep(input);
    case "fail":
      return fail(input, ctx);
    default:
      throw new Error(`unknown action ${ctx.action}`);
  }
}

export default main;

function greet(input: { name: string }): { greeting: string } {
  console.log(`greeting ${input.name}`);
  return { greeting: `Hello, ${input.name}!` };
}

async function sleep(input: { seconds: number }): Promise<{ slept: number }> {
  console.log(`sleeping ${input.seconds}s`);
  await new Promise((resolve) => setTimeout(resolve, input.seconds * 1000));
  return { slept: input.seconds };
}

function fail(input: { fail?: boolean; message?: string }, ctx: Ctx): { ok: true } {
  if (input.fail !== false) {
    throw new Error(input.message ?? `failing on purpose (attempt ${ctx.attempt ?? 1})`);
  }
  return { ok: true };
}
