#!/usr/bin/env bash
# The browser test of `spatix view` (part of README's test command): installs Debian's chromium
# and chromium-driver with apt-get where they are missing (no browser download), builds the
# spatix binary in the test profile (the one `cargo nextest run` already built), and runs
# scripts/test-browser.py, which drives the page through chromedriver. A browser that cannot
# be installed or started fails the test; it is never skipped.
#
#     bash scripts/test-browser.sh [--screenshot FILE]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium chromium-driver >/dev/null
fi
cargo build --quiet --profile test -p spatix-cli --bin spatix
python3 scripts/test-browser.py target/debug/spatix "$@"
