# Sourced by scripts/container-test.sh once its daemon runs: makes sure the stand-in base images
# exist and that the references the Dockerfile and docker-compose.yml pin by digest resolve to
# them. Needs DOCKER, DOCKER_HOST, CACHE, RUNDIR, ROOT, log, fail, as_root, start_daemon and
# stop_daemon from that script.
# shellcheck shell=bash

# What the stand-ins are made of: rebuilt whenever one of these changes.
standin_recipe() {
  {
    cat "$ROOT"/scripts/container/standin-* "$ROOT"/scripts/container/mail-catcher.js
    echo "node $(standin_node_binary) $("$(standin_node_binary)" --version)"
    echo "npm $(standin_npm_version)"
  } | sha256sum | cut -c1-16
}

# The Node.js 24 binary of the lockfile's `node` devDependency (scripts/pinned-node.sh).
standin_node_binary() { node -p 'process.execPath'; }
standin_npm_dir() { echo "$(npm root -g 2>/dev/null)/npm"; }
standin_npm_version() {
  local dir
  dir=$(standin_npm_dir)
  if [ -f "$dir/package.json" ]; then node -p "require('$dir/package.json').version"; else echo 11; fi
}

# The Debian mirror that this machine's apt uses (debootstrap needs its address).
standin_mirror() {
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -E '^[[:space:]]*(deb[[:space:]]|URIs:)' | grep -oE 'https?://[^[:space:]]+/debian/?([[:space:]]|$)' |
    tr -d '[:space:]' | head -1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

image_label() { "$DOCKER" image inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true; }

standin_base() {
  local recipe=bookworm-minbase-1
  [ "$(image_label svc-auth-standin/debian:bookworm svc-auth.standin)" = "$recipe" ] && return 0
  local mirror tree t0
  mirror=$(standin_mirror)
  tree=$CACHE/rootfs.tmp
  t0=$(date +%s)
  log "stand-in: debootstrap --variant=minbase bookworm from $mirror (about a minute)"
  as_root rm -rf "$tree"
  as_root debootstrap --variant=minbase bookworm "$tree" "$mirror" >"$RUNDIR/debootstrap.log" 2>&1 || {
    tail -20 "$RUNDIR/debootstrap.log" >&2
    fail "debootstrap failed (log: $RUNDIR/debootstrap.log)"
  }
  # As Debian's official -slim images do: no manuals or documentation but the copyright files,
  # now or from packages installed later.
  as_root sh -c "cd '$tree' && find usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete &&
    rm -rf usr/share/man/* usr/share/info/* var/cache/apt/archives/*.deb var/lib/apt/lists/* &&
    printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\npath-exclude /usr/share/man/*\npath-exclude /usr/share/info/*\n' >etc/dpkg/dpkg.cfg.d/docker"
  as_root tar -C "$tree" -c --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' . |
    "$DOCKER" import -c 'CMD ["bash"]' -c "LABEL svc-auth.standin=$recipe" - svc-auth-standin/debian:bookworm >/dev/null
  as_root rm -rf "$tree"
  log "stand-in: debian bookworm in $(($(date +%s) - t0)) s"
}

standin_build() { # tag, recipe, context, dockerfile, [build args...]
  local tag=$1 recipe=$2 context=$3 dockerfile=$4
  shift 4
  [ "$(image_label "$tag" svc-auth.standin)" = "$recipe" ] && return 0
  local t0
  t0=$(date +%s)
  "$DOCKER" build --network host --progress plain --label "svc-auth.standin=$recipe" -f "$dockerfile" -t "$tag" "$@" \
    "$context" >"$RUNDIR/standin-build.log" 2>&1 || {
    tail -30 "$RUNDIR/standin-build.log" >&2
    fail "building the stand-in $tag failed (log: $RUNDIR/standin-build.log)"
  }
  log "stand-in: $tag in $(($(date +%s) - t0)) s"
}

# Every name@sha256:digest that the Dockerfile and the compose file pin, with the stand-in tag it
# stands for: "name@sha256:… stand-in-tag" per line.
pinned_references() {
  local ref
  ref=$(sed -n 's/^ARG NODE_IMAGE=//p' "$ROOT/Dockerfile")
  echo "${ref%%:*}@${ref#*@} node:24-bookworm-slim"
  sed -n 's/^[[:space:]]*image:[[:space:]]*\([^[:space:]]*@sha256:[0-9a-f]*\).*/\1/p' "$ROOT/docker-compose.yml" |
    while read -r ref; do
      local name=${ref%@*}
      echo "${name%:*}@${ref#*@} $name"
    done
}

# A registry pull of name@sha256:digest records that reference in the daemon's reference store
# (image/overlay2/repositories.json), and `FROM name@sha256:…` or `image: name@sha256:…` then
# resolves locally. `docker tag` refuses digests, so the stand-ins' entries are written there
# directly, with the daemon stopped. The digests stay the real images' digests: on a machine that
# reaches Docker Hub the same files pull the official images.
standin_pin_digests() {
  local stale=0 ref tag want have
  while read -r ref tag; do
    want=$("$DOCKER" image inspect --format '{{.Id}}' "$tag")
    have=$("$DOCKER" image inspect --format '{{.Id}}' "$ref" 2>/dev/null || true)
    [ "$want" = "$have" ] || stale=1
  done < <(pinned_references)
  [ "$stale" -eq 1 ] || return 0
  log "stand-in: recording the pinned digests in the daemon's reference store"
  local refs
  refs=$(pinned_references | while read -r ref tag; do
    echo "$ref $("$DOCKER" image inspect --format '{{.Id}}' "$tag")"
  done)
  stop_daemon
  as_root env REFS="$refs" FILE="$CACHE/docker/image/overlay2/repositories.json" node -e '
    const fs = require("node:fs");
    const store = JSON.parse(fs.readFileSync(process.env.FILE, "utf8"));
    for (const line of process.env.REFS.trim().split("\n")) {
      const [ref, id] = line.split(" ");
      const repo = ref.slice(0, ref.indexOf("@"));
      (store.Repositories[repo] ??= {})[ref] = id;
    }
    fs.writeFileSync(process.env.FILE, JSON.stringify(store));
  '
  start_daemon
  while read -r ref tag; do
    [ "$("$DOCKER" image inspect --format '{{.Id}}' "$ref" 2>/dev/null)" = "$("$DOCKER" image inspect --format '{{.Id}}' "$tag")" ] ||
      fail "the pinned reference $ref does not resolve to the stand-in $tag"
  done < <(pinned_references)
}

ensure_standins() {
  local recipe ctx npm_dir
  recipe=$(standin_recipe)
  standin_base
  if [ "$(image_label node:24-bookworm-slim svc-auth.standin)" != "$recipe" ]; then
    ctx=$(mktemp -d)
    cp "$(standin_node_binary)" "$ctx/node"
    npm_dir=$(standin_npm_dir)
    if [ -f "$npm_dir/package.json" ]; then
      cp -a "$npm_dir" "$ctx/npm"
    else # npm's registry package carries all its dependencies
      (cd "$ctx" && npm pack --silent npm@11 >/dev/null && mkdir npm && tar -xzf npm-*.tgz -C npm --strip-components 1)
    fi
    standin_build node:24-bookworm-slim "$recipe" "$ctx" "$ROOT/scripts/container/standin-node.Dockerfile"
    rm -rf "$ctx"
  fi
  standin_build svc-auth-standin/services:bookworm "$recipe" "$ROOT/scripts/container" \
    "$ROOT/scripts/container/standin-services.Dockerfile"
  local name cmd
  while read -r name cmd; do
    ctx=$(mktemp -d)
    printf 'FROM svc-auth-standin/services:bookworm\nCMD ["%s"]\n' "$cmd" >"$ctx/Dockerfile"
    standin_build "$name" "$recipe" "$ctx" "$ctx/Dockerfile"
    rm -rf "$ctx"
  done <<'EOF'
postgres:17-bookworm postgres
redis:7-bookworm redis-server
axllent/mailpit:v1.21 mailpit
EOF
  standin_pin_digests
}
