#!/bin/sh
# generate.sh VERSION rebuilds testdata/golden-db/VERSION (v1, v2 or v3):
# it checks out the commit that wrote that format version into a temporary
# git worktree, builds gen/main.go there against that commit's code and
# go.mod, and writes the database and its tables.txt. See README.md.
#
# Today's database (current/) is not built here: its generator is
# TestGoldenDB with -update-golden-db.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
v1) commit=6d463a02d156a07c5905a4cd045291dbc43b6e99 format=row ;;      # 79c6c8f^, the last commit writing version 1
v2) commit=44d0ca30b4d4c4a5071256e930f4beca2e4e8d15 format=columnar ;; # 41ea488^, the last commit writing version 2
v3) commit=41ea4888aca5608d6061bf5e216df86c7515eaa3 format=row ;;      # 41ea488, the first commit writing version 3
*)
	echo "usage: $0 v1|v2|v3" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
wt="$tmp/worktree"
cleanup() {
	git -C "$here" worktree remove --force "$wt" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$here" worktree add --detach "$wt" "$commit" >/dev/null
mkdir "$wt/goldendbgen"
cp "$here/gen/main.go" "$wt/goldendbgen/main.go"

out="$here/$1"
rm -rf "$out"
mkdir "$out"
(cd "$wt" && go run ./goldendbgen -dir "$out/db" -format "$format" -tables "$out/tables.txt" \
	-note "generate.sh $1: gen/main.go built at commit $commit")
rm -f "$out/db/LOCK"
