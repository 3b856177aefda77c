# Shared by start.sh and test.sh: installs what MetatronOS needs, each step a no-op when already done.
# shellcheck shell=bash

export NX_NO_CLOUD=true NX_DAEMON=false NX_TUI=false

say() { printf '\033[1m▸ %s\033[0m\n' "$*"; }

# npm packages, reinstalled only when package-lock.json changed since the last install.
ensure_node_modules() {
  local stamp=node_modules/.metatronos-lock.sha256
  local want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return
  fi
  say "Installing npm packages"
  # Not `npm ci`: its strict lockfile check fails when a registry mirror lacks another
  # platform's optional binaries (they are then absent from the lockfile). `install --no-save`
  # installs the locked versions and leaves package-lock.json alone.
  npm install --no-audit --no-fund --no-save --loglevel=error
  echo "$want" > "$stamp"
}

# The embedded database launcher (Go); not needed when MONGODB_URI points elsewhere.
ensure_ferretdb() {
  say "Building the embedded database (tools/ferretdb)"
  bash tools/ferretdb/build.sh
}

# Debian's Chromium for the browser tests (installed with apt-get when running as root).
ensure_chromium() {
  local chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
  if [[ -x "$chromium" ]]; then
    return
  fi
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "Installing Chromium from Debian's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    return
  fi
  echo "The browser tests need Chromium at $chromium: install it (sudo apt-get install chromium) or set CHROMIUM_PATH." >&2
  exit 4
}

# espeak-ng speaks the fake microphone's WAV in the voice browser test (apps/web-e2e/src/voice.spec.ts).
ensure_espeak() {
  if command -v espeak-ng >/dev/null 2>&1; then
    return
  fi
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "Installing espeak-ng from Debian's packages (the voice browser test's microphone)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng >/dev/null
    return
  fi
  echo "The voice browser test needs espeak-ng: install it (sudo apt-get install espeak-ng)." >&2
  exit 4
}

# bubblewrap for the AI's bash tool (installed with apt-get when running as root on Debian).
# Without it the app still starts; bash is just not offered and the Tools page says why.
ensure_bubblewrap() {
  if [[ -n "${BWRAP_PATH:-}" && -x "${BWRAP_PATH}" ]] || command -v bwrap >/dev/null 2>&1; then
    return
  fi
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "Installing bubblewrap from Debian's packages (the sandbox of the bash tool)"
    if DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; then
      return
    fi
    echo "Could not install bubblewrap with apt-get: the bash tool stays off." >&2
    return
  fi
  echo "Note: the AI's bash tool needs bubblewrap (bwrap); install it (e.g. sudo apt-get install bubblewrap) to enable it. Continuing without it." >&2
}

# GreenMail (IMAP/SMTP) and Radicale (CalDAV): the real servers the accounts tests run against.
# Installed under tools/mail-servers/.cache; Java, Maven or python3-venv come from apt-get as root on Debian,
# otherwise the script stops and names what to install (the tests never skip silently).
ensure_mail_servers() {
  bash tools/mail-servers/install.sh
}
