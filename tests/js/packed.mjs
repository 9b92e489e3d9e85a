// The package as users get it (not a test file): `npm pack` of the repository, installed into
// an empty project in a temp folder outside the repository, offline (the package has no
// dependencies; its optional peer is not installed).
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { REPO } from "./helpers.mjs";

/** Runs a command; resolves to { stdout, stderr }, rejects with both on failure. */
export function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 120_000, maxBuffer: 16 << 20, ...options }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(" ")} failed (${error.code}):\n${stdout}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * Packs the repository and installs the tarball into `<tmp>/package.json`'s project. Resolves
 * to { dir (the project), packed (npm pack --json's entry), tarball, cleanup() }.
 */
export async function packAndInstall(prefix) {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  // A private npm cache; no registry traffic.
  const env = { ...process.env, npm_config_cache: path.join(dir, ".npm-cache"), npm_config_update_notifier: "false" };
  try {
    const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: REPO, env });
    const [packed] = JSON.parse(stdout);
    const tarball = path.join(dir, packed.filename);
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
    await run("npm", ["install", tarball, "--no-audit", "--no-fund", "--offline", "--ignore-scripts"], { cwd: dir, env });
    return { dir, packed, tarball, cleanup: () => rm(dir, { recursive: true, force: true }) };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
