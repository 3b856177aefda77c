#!/usr/bin/env bash
# Installs the real mail and calendar servers the tests of the accounts feature run against:
#   GreenMail (IMAP + SMTP; the greenmail-standalone jar from Maven Central, Java 17) and
#   Radicale (CalDAV; from PyPI, in a virtualenv of its own).
# Everything lands under tools/mail-servers/.cache; a no-op when already there.
# As root on Debian, missing Java, Maven or python3-venv are installed with apt-get;
# otherwise the script stops and says what to install.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"

GREENMAIL_VERSION=2.1.3
RADICALE_VERSION=3.9.0
cache=.cache
jar="$cache/greenmail-standalone-$GREENMAIL_VERSION.jar"
venv="$cache/radicale-$RADICALE_VERSION"

can_apt() { [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; }
apt_updated=0
apt_install() {
  if [[ "$apt_updated" == 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
need() {
  echo "The mail and calendar tests need $1: install it ($2) and run again." >&2
  exit 5
}

java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

mkdir -p "$cache"

if [[ ! -s "$jar" ]]; then
  if ! command -v java >/dev/null 2>&1 || [[ "$(java_major)" -lt 17 ]]; then
    if can_apt; then
      echo "Installing Java 17 from Debian's packages (GreenMail)"
      apt_install openjdk-17-jre-headless
    else
      need "Java 17 or newer" "sudo apt-get install openjdk-17-jre-headless"
    fi
  fi
  if ! command -v mvn >/dev/null 2>&1; then
    if can_apt; then
      echo "Installing Maven from Debian's packages (to fetch GreenMail)"
      apt_install maven
    else
      need "Maven (to fetch GreenMail from Maven Central)" "sudo apt-get install maven"
    fi
  fi
  echo "Fetching GreenMail $GREENMAIL_VERSION from Maven Central"
  mvn -q -B dependency:copy -Dartifact="com.icegreen:greenmail-standalone:$GREENMAIL_VERSION" \
    -DoutputDirectory="$cache" -Dmdep.overWriteIfNewer=true >/dev/null
  [[ -s "$jar" ]] || need "GreenMail" "mvn dependency:get -Dartifact=com.icegreen:greenmail-standalone:$GREENMAIL_VERSION"
fi

if [[ ! -x "$venv/bin/radicale" ]]; then
  command -v python3 >/dev/null 2>&1 || {
    if can_apt; then apt_install python3 python3-venv; else need "Python 3" "sudo apt-get install python3 python3-venv"; fi
  }
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    if can_apt; then
      echo "Installing python3-venv from Debian's packages (Radicale)"
      apt_install python3-venv
      python3 -m venv "$venv"
    else
      need "Python's venv module" "sudo apt-get install python3-venv"
    fi
  fi
  echo "Installing Radicale $RADICALE_VERSION from PyPI"
  "$venv/bin/pip" install -q --disable-pip-version-check "radicale==$RADICALE_VERSION"
fi

echo "GreenMail $GREENMAIL_VERSION and Radicale $RADICALE_VERSION are ready"
