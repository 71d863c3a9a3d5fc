// Dependency fixture: reports whether the install ran and which commit's
// files it sees.
import { existsSync, readFileSync } from "node:fs";

export async function main(_input: unknown, ctx: { commit: string }) {
  return {
    installed: existsSync("node_modules"),
    commit: ctx.commit,
    version: readFileSync("version.txt", "utf8").trim(),
  };
}
