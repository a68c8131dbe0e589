#!/usr/bin/env python3
"""Run the team recipe ``ci/github-team-gate.yml`` as GitHub Actions would, on this machine,
from a team's repository outside the checkout that holds only its ``pyproject.toml``, items
and documents (``tests/data/team-invoices``) and the workflow.

Every ``run:`` step of the workflow runs as written (bash, ``-eo pipefail``), with the
workflow's environment, its ``${{ }}`` expressions evaluated, ``$GITHUB_OUTPUT``,
``$GITHUB_ENV`` and ``$GITHUB_STEP_SUMMARY`` as the runner gives them. What GitHub provides
is played locally: ``actions/checkout`` (a fresh copy of the team's repository per job),
``actions/setup-python`` (a fresh virtual environment), ``actions/cache`` (restored by key,
saved after a job that passed), ``actions/upload-artifact`` and ``download-artifact``, the
JUnit check (the file parsed, its counts and failures printed), the repository's variables
and secrets, and the ``gh`` CLI's releases (a folder). Each job gets an empty user cache
(pip's included), so the first one compiles llama-cpp-python as a fresh runner does.

Two things differ from GitHub, and the output says so: the pinned ``EXTRACTBENCH`` (a git URL
at a tag) is replaced by a wheel built from this checkout, and the data is fetched from a
mirror on 127.0.0.1 serving ``--data-dir`` (``EXTRACTBENCH_DATA_MIRROR``), the candidate GGUF
from the same server (the workflow's URL-and-checksum path, named in the team's
``extractbench-candidate.env`` as a commit names it). Three runs (a release tag also runs the
public suites; a push, the project's own ``suites = ["kv"]``):

1. the release ``v2.2.0`` (a tag push) on the default model: no earlier release, so no
   baseline; it passes and its record becomes the release's asset;
2. a push whose candidate is worse (``EXTRACTBENCH_ARGS=--backend fake``): the gate fails;
3. a push of the default model against the release's record: the gate passes (timed).

    python ci/try-team-gate.py --data-dir DATA [--work DIR] [--runs 1,2,3]

Exits 0 when every run ends as expected, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml

CHECKOUT = Path(__file__).resolve().parent.parent
WORKFLOW = CHECKOUT / "ci" / "github-team-gate.yml"
TEAM = CHECKOUT / "tests" / "data" / "team-invoices"
GH_STUB = '''#!/usr/bin/env python3
"""gh release list/download/view/create/upload on a folder of releases (one folder a tag)."""
import shutil, sys
from pathlib import Path
root = Path(%r)
args = sys.argv[1:]
def opt(name):
    return args[args.index(name) + 1] if name in args else None
if args[:2] == ["release", "list"]:
    tags = sorted(root.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True) if root.is_dir() else []
    print("\\n".join(p.name for p in tags))
elif args[:2] == ["release", "download"]:
    src = root / args[2] / opt("--pattern")
    if not src.is_file():
        sys.exit(f"gh: release {args[2]} has no asset {opt('--pattern')}")
    Path(opt("--dir")).mkdir(parents=True, exist_ok=True)
    shutil.copy(src, Path(opt("--dir")) / src.name)
elif args[:2] == ["release", "view"]:
    sys.exit(0 if (root / args[2]).is_dir() else 1)
elif args[:2] == ["release", "create"]:
    (root / args[2]).mkdir(parents=True)
elif args[:2] == ["release", "upload"]:
    shutil.copy(args[3], root / args[2] / Path(args[3]).name)
else:
    sys.exit(f"gh stub: not supported: {args}")
'''


class Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2's booleans (``on:`` stays a key, as GitHub reads it)."""


Yaml12Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class Context:
    """The expression contexts of one job: inputs, vars, secrets, github, runner, env, steps."""

    def __init__(self, **roots: Any) -> None:
        self.roots = roots
        self.ok = True

    def get(self, root: str, path: str) -> Any:
        node: Any = self.roots.get(root, {})
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return "" if node is None else node

    def evaluate(self, expr: str) -> Any:
        """A GitHub expression: context paths, '' strings, ``||``, ``&&``, ``!``, ``==``,
        ``!=`` and the functions the recipe uses."""
        py = re.sub(r"!(?!=)", " not ", expr.replace("&&", " and ").replace("||", " or "))
        py = re.sub(r"\b(inputs|vars|secrets|github|runner|env|steps)((?:\.[A-Za-z_][\w-]*)+)",
                    lambda m: f"_get({m[1]!r}, {m[2][1:]!r})", py)  # fmt: skip
        names = {"_get": self.get, "always": lambda: True, "success": lambda: self.ok,
                 "failure": lambda: not self.ok, "cancelled": lambda: False,
                 "startsWith": lambda a, b: str(a).lower().startswith(str(b).lower())}  # fmt: skip
        return eval(py, {"__builtins__": {}}, names)  # noqa: S307 - the recipe's own text

    def text(self, value: Any) -> str:
        """``value`` with every ``${{ }}`` replaced, as GitHub renders it into a string."""

        def one(m: re.Match[str]) -> str:
            v = self.evaluate(m[1])
            return ("true" if v else "false") if isinstance(v, bool) else str(v)

        return re.sub(r"\$\{\{(.*?)\}\}", one, str(value), flags=re.S)

    def condition(self, value: Any) -> bool:
        return bool(self.evaluate(str(value).strip().removeprefix("${{").removesuffix("}}")))


def _files(path: Path) -> dict[str, str]:
    """A ``$GITHUB_OUTPUT``/``$GITHUB_ENV`` file: ``K=V`` lines and ``K<<EOF`` blocks."""
    out, lines = {}, path.read_text().splitlines() if path.exists() else []
    while lines:
        line = lines.pop(0)
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            value = []
            while lines and lines[0] != delim:
                value.append(lines.pop(0))
            lines = lines[1:]
            out[key] = "\n".join(value)
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


class Runner:
    """The GitHub side of the runs: repository settings, caches, artifacts, releases."""

    def __init__(self, work: Path, env: dict[str, str], log: Path) -> None:
        self.work, self.env, self.log = work, env, log
        self.caches, self.releases = work / "caches", work / "releases"
        (work / "bin").mkdir(parents=True, exist_ok=True)
        gh = work / "bin" / "gh"
        gh.write_text(GH_STUB % str(self.releases))
        gh.chmod(0o755)

    def say(self, text: str) -> None:
        print(text, flush=True)
        with self.log.open("a") as f:
            f.write(text + "\n")

    def job(self, workflow: dict, name: str, ctx: Context, artifacts: Path) -> bool:
        spec = workflow["jobs"][name]
        temp = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))
        workspace = temp / "repository"
        shutil.copytree(self.work / "team", workspace)
        files = {k: temp / f"{k.lower()}.txt" for k in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY", "GITHUB_PATH")}  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "EXTRACTBENCH", "PYTEST"))}  # fmt: skip
        env.update(self.env, HOME=str(temp / "home"), XDG_CACHE_HOME=str(temp / "home" / ".cache"),
                   RUNNER_TEMP=str(temp), GITHUB_WORKSPACE=str(workspace), CI="true", GITHUB_ACTIONS="true",
                   GITHUB_REF=ctx.get("github", "ref"), GITHUB_REF_NAME=ctx.get("github", "ref_name"),
                   GITHUB_EVENT_NAME=ctx.get("github", "event_name"),
                   GITHUB_REPOSITORY=ctx.get("github", "repository"), RUNNER_OS="Linux")  # fmt: skip
        env["PATH"] = os.pathsep.join([str(self.work / "bin"), *[p for p in env["PATH"].split(os.pathsep) if ".venv" not in p]])  # fmt: skip
        env.update({k: str(v) for k, v in files.items()})
        for k in ("workflow", "job"):
            for key, value in ((workflow if k == "workflow" else spec).get("env") or {}).items():
                ctx.roots["env"][key] = env[key] = self.env.get(key) or ctx.text(value)
        saves: list[tuple[Path, Path]] = []
        started = time.monotonic()
        for number, step in enumerate(spec["steps"], 1):
            title = step.get("name") or step.get("uses") or step["run"].splitlines()[0]
            if not ctx.condition(step.get("if", "success()")):
                self.say(f"--- {name} step {number}: {title}: skipped")
                continue
            step_env = dict(env)
            step_env.update({k: ctx.text(v) for k, v in (step.get("env") or {}).items()})
            for path in files.values():
                path.write_text("")
            began = time.monotonic()
            self.say(f"--- {name} step {number}: {title}")
            if "run" in step:
                ok = self._bash(ctx.text(step["run"]), workspace, step_env)
            else:
                ok = self._action(step, ctx, workspace, artifacts, saves)
            outputs = _files(files["GITHUB_OUTPUT"])
            for key, value in _files(files["GITHUB_ENV"]).items():
                env[key] = ctx.roots["env"][key] = value
            for line in files["GITHUB_PATH"].read_text().splitlines():
                env["PATH"] = f"{line}{os.pathsep}{env['PATH']}"
            if files["GITHUB_STEP_SUMMARY"].read_text().strip():
                self.say(
                    "    step summary: "
                    + " | ".join(files["GITHUB_STEP_SUMMARY"].read_text().strip().splitlines()[:6])
                )
            ctx.roots["steps"][step.get("id", f"_{number}")] = {"outputs": outputs}
            ctx.ok = ctx.ok and ok
            self.say(f"    {'ok' if ok else 'FAILED'} in {time.monotonic() - began:.1f} s")
        for path, store in saves if ctx.ok else []:
            if path.exists() and not store.exists():
                shutil.copytree(path, store)
                self.say(f"    cache saved: {store.name}")
        self.say(
            f"=== job {name}: {'succeeded' if ctx.ok else 'FAILED'} in {time.monotonic() - started:.1f} s"
        )
        return ctx.ok

    def _bash(self, script: str, cwd: Path, env: dict[str, str]) -> bool:
        proc = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            self.say("    " + line.rstrip("\n"))
        return proc.wait() == 0

    def _action(
        self, step: dict, ctx: Context, workspace: Path, artifacts: Path, saves: list
    ) -> bool:
        uses, given = (
            step["uses"].split("@")[0],
            {k: ctx.text(v) for k, v in (step.get("with") or {}).items()},
        )
        if uses == "actions/checkout":
            self.say("    the team's repository, checked out fresh")
        elif uses == "actions/setup-python":
            venv = workspace.parent / "python"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run(
                [venv / "bin" / "python", "-m", "pip", "install", "-q", "--upgrade", "pip"],
                check=True,
            )
            (workspace.parent / "github_path.txt").write_text(f"{venv / 'bin'}\n")
            self.say(
                f"    Python {sys.version.split()[0]} in a fresh environment (the recipe asks for {given.get('python-version')})"
            )
        elif uses == "actions/cache":
            path = (workspace / given["path"]).resolve()
            store = self.caches / hashlib.sha256(given["key"].encode()).hexdigest()[:16]
            hit = store.exists()
            if hit:
                shutil.copytree(store, path, dirs_exist_ok=True)
            else:
                saves.append((path, store))
            (workspace.parent / "github_output.txt").write_text(
                f"cache-hit={'true' if hit else 'false'}\n"
            )
            self.say(
                f"    cache {given['key']}: {'restored' if hit else 'missed (saved after the job if it passes)'}"
            )
        elif uses == "actions/upload-artifact":
            src = workspace / given["path"]
            if not src.exists():
                self.say(f"    no files at {given['path']}")
                return True
            shutil.copytree(src, artifacts / given["name"], dirs_exist_ok=True)
            self.say(f"    artifact {given['name']}: {sorted(p.name for p in src.iterdir())}")
        elif uses == "actions/download-artifact":
            shutil.copytree(
                artifacts / given["name"], workspace / given["path"], dirs_exist_ok=True
            )
        elif uses == "mikepenz/action-junit-report":
            return self._junit(workspace / given["report_paths"], given.get("check_name", ""))
        else:
            self.say(f"    action {uses} is not played here")
            return False
        return True

    def _junit(self, path: Path, check: str) -> bool:
        if not path.is_file():
            self.say(f"    check {check}: no JUnit file at {path.name}")
            return False
        cases = list(ET.parse(path).getroot().iter("testcase"))
        failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
        self.say(f"    check {check}: {len(cases)} tests, {len(failed)} failed")
        for case in failed[:8]:
            node = case.find("failure") if case.find("failure") is not None else case.find("error")
            self.say(
                f"      FAILED {case.get('classname')}::{case.get('name')}: {(node.get('message') or '')[:160]}"
            )
        return True  # the action reports; the gate step's exit code decides


def _serve(folders: dict[str, Path]) -> str:
    """An HTTP server on 127.0.0.1 serving each folder under /NAME/; its base URL."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path: str) -> str:
            name, _, rest = path.lstrip("/").partition("/")
            return str(folders.get(name, Path("/nonexistent")) / rest.split("?")[0])

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", required=True, help="the benchmark data, served as the mirror"
    )
    parser.add_argument("--work", help="folder for the runs (default: a new temporary one)")
    parser.add_argument("--runs", default="1,2,3", help="which of the three runs (default 1,2,3)")
    parser.add_argument("--pip-cache", help="keep pip's cache in DIR across jobs (faster reruns; "
                        "by default each job starts with an empty one, as a fresh runner)")  # fmt: skip
    args = parser.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="team-gate-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    log = work / "runs.log"
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(CHECKOUT), "--no-deps", "-q", "-w", str(dist)], check=True)  # fmt: skip
    shutil.rmtree(CHECKOUT / "build", ignore_errors=True)
    (wheel,) = dist.glob("extractbench-*.whl")
    team = work / "team"
    if not team.exists():
        shutil.copytree(TEAM, team)
        (team / ".github" / "workflows").mkdir(parents=True)
        shutil.copy(WORKFLOW, team / ".github" / "workflows" / "extractbench.yml")
    sys.path.insert(0, str(CHECKOUT))
    from extractbench.suites.model_files import default_model_path, file_sha256

    model = default_model_path()
    base = _serve({"models": model.parent, "data": Path(args.data_dir).resolve()})
    env = {"EXTRACTBENCH": str(wheel), "EXTRACTBENCH_DATA_MIRROR": f"{base}/data/"}
    if args.pip_cache:
        env["PIP_CACHE_DIR"] = str(Path(args.pip_cache).resolve())
    runner = Runner(work, env, log)
    runner.say(f"team repository: {sorted(p.name for p in team.iterdir())} ({team})")
    runner.say(
        f"differs from GitHub: EXTRACTBENCH={wheel} (the workflow pins a git URL); the data mirror {base}/data/"
    )
    workflow = yaml.load(WORKFLOW.read_text(), Loader=Yaml12Loader)
    # the candidate as the team's commit names it (the workflow reads this file)
    candidate = f"MODEL={base}/models/{model.name}\nMODEL_SHA256={file_sha256(model)}\n"
    plan = {
        "1": ("release v2.2.0 on the default model (no earlier release)", "refs/tags/v2.2.0", {}, 0),
        "2": ("push: a worse candidate (EXTRACTBENCH_ARGS=--backend fake)", "refs/heads/main",
              {"EXTRACTBENCH_ARGS": "--backend fake", "no_candidate": True}, 1),
        "3": ("push: the default model against the release's record", "refs/heads/main", {}, 0),
    }  # fmt: skip
    results = []
    for key in args.runs.split(","):
        title, ref, extra, expected = plan[key]
        extra = dict(extra)
        named = team / "extractbench-candidate.env"
        if extra.pop("no_candidate", False):
            named.unlink(missing_ok=True)
        else:
            named.write_text(candidate)
        runner.say(f"\n##### run {key}: {title}")
        artifacts = work / f"artifacts-{key}"
        shutil.rmtree(artifacts, ignore_errors=True)
        started, passed = time.monotonic(), True
        for name, spec in workflow["jobs"].items():
            ctx = Context(inputs={}, vars=extra, secrets={}, env={}, steps={},
                          github={"ref": ref, "ref_name": ref.rsplit("/", 1)[-1], "event_name": "push",
                                  "repository": "acme/invoice-model", "token": "local"},
                          runner={"os": "Linux"})  # fmt: skip
            if "needs" in spec and not passed:
                runner.say(f"=== job {name}: skipped (needs {spec['needs']})")
                continue
            if not ctx.condition(spec.get("if", "success()")):
                runner.say(f"=== job {name}: skipped (if: {spec['if']})")
                continue
            passed = runner.job(workflow, name, ctx, artifacts) and passed
        seconds = time.monotonic() - started
        record = artifacts / "extractbench-reports" / "run.json"
        word = json.loads(record.read_text())["verdict"]["word"] if record.exists() else "no record"
        results.append((key, title, passed, word, seconds, passed == (expected == 0)))
    runner.say("\n##### summary")
    for key, title, passed, word, seconds, as_expected in results:
        runner.say(f"run {key}: {title}: workflow {'passed' if passed else 'failed'}, verdict {word}, "
                   f"{seconds / 60:.1f} min; {'as expected' if as_expected else 'NOT AS EXPECTED'}")  # fmt: skip
    runner.say(f"log: {log}")
    return 0 if all(r[-1] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
