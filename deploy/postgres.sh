# shellcheck shell=bash
# A local PostgreSQL cluster from Debian's `postgresql` package, for the tests (Tests/run) and
# for `deploy/compose up --postgres`: initdb into a directory, started on a loopback port,
# stopped again. As root the server runs as the `postgres` user (PostgreSQL refuses root).
# Sourced, not run.

# The directory of the newest installed server's tools (initdb, pg_ctl), or nothing.
pg_tools() {
    local newest
    newest=$(ls /usr/lib/postgresql 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -1)
    [ -n "$newest" ] && [ -x "/usr/lib/postgresql/$newest/bin/pg_ctl" ] && echo "/usr/lib/postgresql/$newest/bin"
}

# Runs a server tool as the user that owns the cluster.
pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_cluster_init DIR USER [durable]: a new cluster in DIR/data whose superuser is USER,
# trusted on loopback only. Without "durable" it skips fsync (tests: speed over crash safety).
pg_cluster_init() {
    local dir=$1 user=$2 durable=${3:-} tools
    tools=$(pg_tools) || { echo "PostgreSQL's server is not installed: apt-get install postgresql" >&2; return 1; }
    mkdir -p "$dir" && chmod 700 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    local sync=--no-sync
    [ -n "$durable" ] && sync=
    pg_as_owner "$tools/initdb" -D "$dir/data" -U "$user" -A trust -E UTF8 --no-locale $sync >"$dir/initdb.log" 2>&1 \
        || { echo "initdb failed; see $dir/initdb.log" >&2; return 1; }
}

# pg_cluster_start DIR PORT [durable]: starts the cluster of DIR on 127.0.0.1:PORT, its socket
# in DIR; waits until it accepts connections.
pg_cluster_start() {
    local dir=$1 port=$2 durable=${3:-} tools options
    tools=$(pg_tools) || return 1
    # pg_ctl hands -o to a shell: the directory is quoted for it (one with a quote is refused).
    case $dir in *"'"*) echo "the PostgreSQL directory must not contain a quote: $dir" >&2; return 1 ;; esac
    options="-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='$dir' -c max_connections=1000"
    [ -z "$durable" ] && options="$options -c fsync=off -c full_page_writes=off -c synchronous_commit=off"
    pg_as_owner "$tools/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$options" -w -t 60 start >/dev/null \
        || { echo "PostgreSQL did not start on port $port; see $dir/server.log" >&2; return 1; }
}

# pg_cluster_stop DIR: stops the cluster of DIR (fast shutdown), if it runs.
pg_cluster_stop() {
    local dir=$1 tools
    tools=$(pg_tools) || return 0
    [ -f "$dir/data/postmaster.pid" ] && pg_as_owner "$tools/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
    return 0
}
