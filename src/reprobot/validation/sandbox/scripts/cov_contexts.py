"""Which test functions ran each line: coverage.py's per-line contexts as one small JSON file.

Usage: cov_contexts.py DATA_FILE OUT_JSON REPO_ROOT. Writes
``{"contexts": [label, ...], "files": {relative path: {line: [context index, ...]}}}``; lines
that ran only outside any test function (module import, the empty context) are left out, which
keeps the file small on projects that import most of themselves at start-up.
"""

import json
import sys

sys.path.append("/opt/reprobot/tools")

from coverage import CoverageData


def main() -> None:
    data_file, out_path, root = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/") + "/"
    data = CoverageData(basename=data_file)
    data.read()
    labels: list[str] = []
    index: dict[str, int] = {}
    files: dict[str, dict[str, list[int]]] = {}
    for path in sorted(data.measured_files()):
        rel = path[len(root) :] if path.startswith(root) else path
        lines: dict[str, list[int]] = {}
        for line, contexts in sorted((data.contexts_by_lineno(path) or {}).items()):
            named = sorted(c for c in contexts if c)
            if not named:
                continue
            ids = []
            for label in named:
                if label not in index:
                    index[label] = len(labels)
                    labels.append(label)
                ids.append(index[label])
            lines[str(line)] = ids
        if lines:
            files[rel] = lines
    with open(out_path, "w") as fh:
        json.dump({"contexts": labels, "files": files}, fh, separators=(",", ":"))


if __name__ == "__main__":
    main()
