// Warm attack shim: the attack suite's warm run (attack_test.go) runs the
// same attacks of attack.sh as a child of a warm node process, with the
// files of the command contract in the process's /tmp.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function (input, ctx) {
  const dir = mkdtempSync(join(tmpdir(), "attack-"));
  const files = { WF_INPUT: join(dir, "input.json"), WF_RESULT: join(dir, "result.json"), WF_ERROR: join(dir, "error.json") };
  writeFileSync(files.WF_INPUT, JSON.stringify(input));
  const r = spawnSync("/bin/sh", [join(process.cwd(), "attack.sh")], { env: { ...process.env, ...files }, stdio: ["ignore", "inherit", "inherit"] });
  let out;
  try {
    out = readFileSync(files.WF_RESULT, "utf8");
  } catch (err) {
    throw new Error(`attack.sh ${ctx.action} wrote no result (status ${r.status}, signal ${r.signal})`);
  }
  return JSON.parse(out);
}
