#!/usr/bin/env bash
# Installs what Storefront needs on a Debian machine, or says exactly what to run.
# Sourced by deploy/compose and Tests/run; `ensure_requirements build|run|test|postgres|metrics`:
#   build  what `deploy/compose up` needs to build and run (nghttp2-client: its health checks)
#   run    what `deploy/compose up` needs to run executables built elsewhere (SHOP_BIN_DIR)
#   test   what Tests/run needs
#   postgres   what `deploy/compose up --postgres` needs beside: a PostgreSQL server and psql
#   metrics    what `deploy/compose up --metrics` needs beside: prometheus, and curl for its
#              readiness check

APT_BUILD=(libnghttp2-dev libsqlite3-dev libhttp-parser-dev libpq-dev nghttp2-client)
APT_RUN=(libnghttp2-14 libsqlite3-0 libhttp-parser2.9 libpq5 nghttp2-client)
APT_POSTGRES=(postgresql postgresql-client)
APT_METRICS=(prometheus curl)
# procps: pgrep, for DeployTests; chromium, chromium-driver, python3-selenium: BrowserJourneyLiveTests
# (Debian's selenium is for Debian's /usr/bin/python3, which the test prefers); postgresql: the
# PostgreSQL server the PostgreSQLTests start; prometheus and curl: MetricsDeployLiveTests (promtool
# checks every process's /metrics, read with curl; compose's up --metrics runs prometheus).
APT_TEST=(libnghttp2-dev libsqlite3-dev libhttp-parser-dev libpq-dev nghttp2-client sqlite3 procps chromium chromium-driver python3-selenium postgresql prometheus curl)
# Python packages as pip-name:import-name. pyyaml: DeployTests reads the Kubernetes manifests.
PIP_TEST=(grpcio:grpc aiosmtpd:aiosmtpd pyyaml:yaml connect-python:connectrpc sonora:sonora)

missing_apt() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || printf '%s ' "$pkg"
  done
}

missing_pip() {
  local entry
  for entry in "$@"; do
    python3 -c "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec('${entry#*:}') else 1)" 2>/dev/null || printf '%s ' "${entry%%:*}"
  done
}

ensure_requirements() {
  local mode=$1 apt pip
  if [ "$mode" = build ] || [ "$mode" = test ]; then
    command -v swift >/dev/null || { echo "swift is not on PATH: install Swift 6.3 (https://www.swift.org/install/linux/) and retry." >&2; return 1; }
  fi
  case $mode in
    test) apt=$(missing_apt "${APT_TEST[@]}") ;;
    run) apt=$(missing_apt "${APT_RUN[@]}") ;;
    postgres) apt=$(missing_apt "${APT_POSTGRES[@]}") ;;
    metrics) apt=$(missing_apt "${APT_METRICS[@]}") ;;
    *) apt=$(missing_apt "${APT_BUILD[@]}") ;;
  esac
  if [ -n "$apt" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "installing Debian packages: $apt"
      # shellcheck disable=SC2086
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $apt) >/dev/null || {
        echo "apt-get failed; run: sudo apt-get install -y $apt" >&2; return 1; }
    else
      echo "missing Debian packages; run: sudo apt-get install -y $apt" >&2
      return 1
    fi
  fi
  if [ "$mode" = test ]; then
    command -v python3 >/dev/null || { echo "python3 is missing; run: sudo apt-get install -y python3 python3-pip" >&2; return 1; }
    pip=$(missing_pip "${PIP_TEST[@]}")
    if [ -n "$pip" ]; then
      echo "installing Python packages: $pip"
      # shellcheck disable=SC2086
      python3 -m pip install -q $pip 2>/dev/null || python3 -m pip install -q --break-system-packages $pip || {
        echo "pip failed; run: python3 -m pip install $pip" >&2; return 1; }
    fi
  fi
  return 0
}
