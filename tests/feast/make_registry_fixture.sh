#!/usr/bin/env bash
# Rebuilds tests/fixtures/feast/registry.json from a real Feast run over tests/feast/repo.
# Usage: tests/feast/make_registry_fixture.sh [PYTHON]   (PYTHON has feast installed;
# default: .venv/bin/python). Runs offline: local provider, file offline store.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${1:-$root/.venv/bin/python}"
feast="$(dirname "$python")/feast"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/repo/." "$work/"
cd "$work"
"$python" make_data.py data
"$feast" apply > /dev/null
"$feast" registry-dump > "$root/tests/fixtures/feast/registry.json"
"$python" -c "import feast; print('feast', feast.__version__)" > "$root/tests/fixtures/feast/FEAST_VERSION"
echo "wrote tests/fixtures/feast/registry.json"
