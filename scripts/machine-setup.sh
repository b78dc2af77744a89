# Sourced by scripts/test.sh and .ci/run: everything the tests need on this machine.
#
# prepare_test_machine
# 1. installs missing system packages (idempotent; apt-get as root) and node_modules,
# 2. makes sure PostgreSQL answers on 127.0.0.1 with trust auth and a `test`
#    database, starting the machine's cluster or, failing that, a throwaway one,
# 3. makes members of the role steadfast_password_auth log in with a password over TCP
#    (two lines at the top of pg_hba.conf), for the rotating-password (Entra ID) tests,
# 4. starts PgBouncer (transaction mode) in front of it for the session-free
#    provider tests, and exports STEADFAST_TEST_DATABASE_URL and
#    STEADFAST_TEST_PGBOUNCER_URL. A preset variable whose server answers is kept.
# What it started is stopped by cleanup_test_machine (test.sh traps EXIT with it).
#
# Environment knobs (all optional):
#   STEADFAST_CI_FORCE_THROWAWAY=1   skip the machine's server, always use a throwaway cluster
#   STEADFAST_TEST_DATABASE_URL=...  use this database if it answers `select 1`
#   STEADFAST_TEST_PGBOUNCER_URL=... use this PgBouncer if it answers `select 1`

STEADFAST_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PGCONNECT_TIMEOUT="${PGCONNECT_TIMEOUT:-5}"

log() { echo "[setup] $*" >&2; }
die() {
	echo "[setup] error: $*" >&2
	exit 1
}

# --------------------------------------------------------------------------
# Packages
# --------------------------------------------------------------------------

APT_UPDATED=0
apt_install() {
	command -v apt-get >/dev/null || die "apt-get not available; install manually: $*"
	if [[ $APT_UPDATED == 0 ]]; then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" </dev/null
}

ensure_packages() {
	command -v cargo >/dev/null || die "cargo not found; the Rust toolchain must be preinstalled"
	local missing=()
	command -v cc >/dev/null || missing+=(gcc libc6-dev)
	command -v pkg-config >/dev/null || missing+=(pkg-config)
	# sqlx uses native-tls, i.e. OpenSSL, on Linux.
	if ! command -v pkg-config >/dev/null || ! pkg-config --exists openssl; then
		missing+=(libssl-dev)
	fi
	# The release build of the addon (scripts/package.sh) builds OpenSSL from source.
	command -v perl >/dev/null || missing+=(perl)
	command -v make >/dev/null || missing+=(make)
	# The TLS test makes self-signed certificates with the openssl command.
	command -v openssl >/dev/null || missing+=(openssl)
	{ command -v psql >/dev/null && command -v pg_isready >/dev/null; } || missing+=(postgresql-client)
	# The Node events test edits an SQLite database with the sqlite3 shell.
	command -v sqlite3 >/dev/null || missing+=(sqlite3)
	# The clock-skew tests run workers under libfaketime.
	[[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ]] || missing+=(faketime)
	# The fault suite starts throwaway clusters of its own (initdb, pg_ctl).
	pg_bin_dir >/dev/null || missing+=(postgresql)
	# The web console test drives the page in Debian's headless Chromium (playwright-core).
	[[ -x /usr/bin/chromium ]] || missing+=(chromium)
	if ((${#missing[@]})); then
		apt_install "${missing[@]}"
	else
		log "system packages present"
	fi

	# Node binding: Node.js + npm, then the package's dev dependencies (napi CLI, typescript,
	# pg for the tests): always afresh in CI, else only when missing.
	command -v npm >/dev/null || apt_install nodejs npm
	if [[ -n ${CI:-} || ! -d $STEADFAST_ROOT/node_modules ]]; then
		log "npm ci"
		(cd "$STEADFAST_ROOT" && npm ci --no-audit --no-fund </dev/null)
	fi
}

# --------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------

# pg_usable PORT: the server on 127.0.0.1:PORT accepts user postgres on database test.
pg_usable() {
	local port=$1
	pg_isready -q -h 127.0.0.1 -p "$port" &&
		psql -w -h 127.0.0.1 -p "$port" -U postgres -d test -Atqc 'select 1' >/dev/null 2>&1
}

# pg_wait_ready PORT [SECONDS]
pg_wait_ready() {
	local port=$1 deadline=$((SECONDS + ${2:-30}))
	until pg_isready -q -h 127.0.0.1 -p "$port"; do
		((SECONDS < deadline)) || return 1
		sleep 0.5
	done
}

# pg_ensure_test_db PORT: create database `test` if the server lacks it.
pg_ensure_test_db() {
	local port=$1
	local exists
	exists=$(psql -w -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atqc \
		"select 1 from pg_database where datname = 'test'") || return 1
	if [[ $exists != 1 ]]; then
		log "creating database test on port $port"
		psql -w -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc 'create database test' >/dev/null || return 1
	fi
}

# port_in_use PORT: something accepts TCP connections on 127.0.0.1:PORT.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# first_free_port PORT...: print the first PORT nothing listens on; fail if there is none.
first_free_port() {
	local candidate
	for candidate in "$@"; do
		if ! port_in_use "$candidate"; then
			echo "$candidate"
			return 0
		fi
	done
	return 1
}

# pg_bin_dir: directory holding initdb and pg_ctl (installs the server if needed).
pg_bin_dir() {
	local dir
	# shellcheck disable=SC2012 # Debian version directories: plain numbers
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x $dir/initdb && -x $dir/pg_ctl ]]; then
			echo "$dir"
			return 0
		fi
	done
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

# as_postgres CMD...: run CMD as the postgres OS user when we are root
# (initdb and the server refuse to run as root).
as_postgres() {
	# From /, so the server tools never trip over an unreadable working directory.
	if [[ $(id -u) == 0 ]]; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && "$@")
	fi
}

# start_throwaway_postgres PORT DIR: initdb a trust-auth cluster in DIR (created,
# must not hold a cluster yet), start it on 127.0.0.1:PORT, create database test.
start_throwaway_postgres() {
	local port=$1 dir=$2 bin
	if ! bin=$(pg_bin_dir); then
		apt_install postgresql
		bin=$(pg_bin_dir) || die "initdb/pg_ctl not found even after installing postgresql"
	fi
	if [[ $(id -u) == 0 ]] && ! id postgres >/dev/null 2>&1; then
		log "creating OS user postgres"
		useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi
	mkdir -p "$dir"
	if [[ $(id -u) == 0 ]]; then
		chown postgres: "$dir"
	fi
	chmod 700 "$dir"

	log "initdb throwaway cluster in $dir ($bin)"
	as_postgres "$bin/initdb" -U postgres --auth=trust -E UTF8 --locale=C --no-sync \
		-D "$dir/data" >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		die "initdb failed"
	}
	log "starting throwaway cluster on 127.0.0.1:$port"
	as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c max_connections=200" \
		start >/dev/null || {
		cat "$dir/server.log" >&2 || true
		die "throwaway cluster did not start"
	}
	pg_wait_ready "$port" 30 || die "throwaway cluster on port $port is not ready"
	pg_ensure_test_db "$port" || die "could not create database test on port $port"
	pg_usable "$port" || die "throwaway cluster on port $port is not usable"
}

# stop_throwaway_postgres DIR: stop the cluster in DIR and delete DIR.
stop_throwaway_postgres() {
	local dir=$1 bin
	[[ -d $dir/data ]] || return 0
	bin=$(pg_bin_dir) || return 1
	log "stopping throwaway cluster in $dir"
	as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null || true
	rm -rf "$dir"
}

# try_machine_cluster: start the machine's own cluster (Debian layout) and make it usable on 5432.
try_machine_cluster() {
	command -v pg_ctlcluster >/dev/null || return 1
	local version
	# shellcheck disable=SC2012 # Debian version directories: plain numbers
	version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -1) || true
	[[ -n $version && -d /etc/postgresql/$version/main ]] || return 1
	log "starting cluster $version/main with pg_ctlcluster"
	pg_ctlcluster --skip-systemctl-redirect "$version" main start </dev/null || true
	pg_wait_ready 5432 30 || return 1
	pg_ensure_test_db 5432 || return 1
	pg_usable 5432
}

THROWAWAY_PG_DIR=""
cleanup() {
	stop_pgbouncer || true
	if [[ -n $THROWAWAY_PG_DIR ]]; then
		stop_throwaway_postgres "$THROWAWAY_PG_DIR" || true
	fi
}

# ensure_postgres: set STEADFAST_TEST_DATABASE_URL to a working database.
ensure_postgres() {
	if [[ -n ${STEADFAST_TEST_DATABASE_URL:-} ]] &&
		psql -w "$STEADFAST_TEST_DATABASE_URL" -Atqc 'select 1' >/dev/null 2>&1; then
		log "using preset STEADFAST_TEST_DATABASE_URL"
		return 0
	fi

	local port=5432
	if [[ ${STEADFAST_CI_FORCE_THROWAWAY:-0} != 1 ]]; then
		if pg_usable 5432; then
			log "PostgreSQL is up on 127.0.0.1:5432"
		elif pg_isready -q -h 127.0.0.1 -p 5432 && pg_ensure_test_db 5432 && pg_usable 5432; then
			log "PostgreSQL is up on 127.0.0.1:5432 (created database test)"
		elif try_machine_cluster; then
			log "PostgreSQL started with pg_ctlcluster on 127.0.0.1:5432"
		else
			port=""
		fi
	else
		port=""
	fi

	if [[ -z $port ]]; then
		port=$(first_free_port 5432 54329 54330 54331 54332 54333) ||
			die "no free port for a throwaway PostgreSQL cluster"
		THROWAWAY_PG_DIR=$(mktemp -d /tmp/steadfast-ci-pg.XXXXXX)
		start_throwaway_postgres "$port" "$THROWAWAY_PG_DIR"
		log "throwaway PostgreSQL is up on 127.0.0.1:$port"
	fi

	export STEADFAST_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/test"
}

# --------------------------------------------------------------------------
# PgBouncer (transaction mode) in front of the test database: the provider's
# session-free mode is validated through it (STEADFAST_TEST_PGBOUNCER_URL).
# --------------------------------------------------------------------------

PGBOUNCER_DIR=""
stop_pgbouncer() {
	[[ -n $PGBOUNCER_DIR && -f $PGBOUNCER_DIR/pgbouncer.pid ]] || return 0
	kill "$(cat "$PGBOUNCER_DIR/pgbouncer.pid")" 2>/dev/null || true
	rm -rf "$PGBOUNCER_DIR"
}

# ensure_pgbouncer: start PgBouncer on a free port for the database in
# STEADFAST_TEST_DATABASE_URL and export STEADFAST_TEST_PGBOUNCER_URL (kept when it is
# preset and answers).
ensure_pgbouncer() {
	if [[ -n ${STEADFAST_TEST_PGBOUNCER_URL:-} ]] &&
		psql -w "$STEADFAST_TEST_PGBOUNCER_URL" -Atqc 'select 1' >/dev/null 2>&1; then
		log "using preset STEADFAST_TEST_PGBOUNCER_URL"
		return 0
	fi
	command -v pgbouncer >/dev/null || apt_install pgbouncer
	local target_port bouncer_port
	target_port=$(sed -E 's#^.*@[^:/]+:([0-9]+)/.*$#\1#' <<<"$STEADFAST_TEST_DATABASE_URL")
	[[ $target_port =~ ^[0-9]+$ ]] || target_port=5432
	bouncer_port=$(first_free_port $(seq 6432 6451)) || die "no free port for PgBouncer (6432-6451 taken)"
	PGBOUNCER_DIR=$(mktemp -d /tmp/steadfast-ci-pgbouncer.XXXXXX)
	printf '%s\n' \
		'[databases]' \
		"test = host=127.0.0.1 port=$target_port dbname=test user=postgres" \
		'' \
		'[pgbouncer]' \
		'listen_addr = 127.0.0.1' \
		"listen_port = $bouncer_port" \
		'auth_type = any' \
		'pool_mode = transaction' \
		'max_client_conn = 1000' \
		'default_pool_size = 40' \
		'ignore_startup_parameters = extra_float_digits,application_name,options' \
		"logfile = $PGBOUNCER_DIR/pgbouncer.log" \
		"pidfile = $PGBOUNCER_DIR/pgbouncer.pid" \
		"unix_socket_dir = $PGBOUNCER_DIR" >"$PGBOUNCER_DIR/pgbouncer.ini"
	if [[ $(id -u) == 0 ]]; then
		chown -R postgres: "$PGBOUNCER_DIR"
	fi
	as_postgres pgbouncer -d "$PGBOUNCER_DIR/pgbouncer.ini" || die "PgBouncer did not start"
	pg_wait_ready "$bouncer_port" 20 || die "PgBouncer on port $bouncer_port is not ready"
	export STEADFAST_TEST_PGBOUNCER_URL="postgres://postgres@127.0.0.1:$bouncer_port/test"
	log "PgBouncer (transaction mode) on 127.0.0.1:$bouncer_port"
}

# --------------------------------------------------------------------------
# Password logins: members of PASSWORD_AUTH_ROLE must give a password over TCP
# (scram-sha-256); every other role keeps trust. The tests of rotating passwords
# (Entra ID tokens) log in as such members.
# --------------------------------------------------------------------------

PASSWORD_AUTH_ROLE=steadfast_password_auth
ensure_password_auth() {
	local url=$STEADFAST_TEST_DATABASE_URL hba lines
	psql -w "$url" -qAtc "DO \$\$ BEGIN CREATE ROLE $PASSWORD_AUTH_ROLE NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" ||
		die "could not create role $PASSWORD_AUTH_ROLE (the test database's user must be a superuser)"
	hba=$(psql -w "$url" -qAtc 'SHOW hba_file') || die "could not read hba_file"
	lines="host all +$PASSWORD_AUTH_ROLE 127.0.0.1/32 scram-sha-256
host all +$PASSWORD_AUTH_ROLE ::1/128 scram-sha-256"
	grep -qF "+$PASSWORD_AUTH_ROLE" "$hba" 2>/dev/null && return 0
	[[ -w $hba ]] || die "cannot edit $hba: add these lines at its top, then SELECT pg_reload_conf():
$lines"
	# Rewritten in place (not replaced), so that its owner and mode stay.
	local rest
	rest=$(cat "$hba")
	printf '# steadfast tests (scripts/machine-setup.sh): password logins for members of %s\n%s\n%s\n' \
		"$PASSWORD_AUTH_ROLE" "$lines" "$rest" >"$hba"
	psql -w "$url" -qAtc 'SELECT pg_reload_conf()' >/dev/null || die "could not reload pg_hba.conf"
	log "pg_hba.conf: password logins for members of $PASSWORD_AUTH_ROLE ($hba)"
}

prepare_test_machine() {
	ensure_packages
	ensure_postgres
	# Mask a password, should a preset URL carry one.
	log "STEADFAST_TEST_DATABASE_URL=$(sed -E 's#://([^:/@]*):[^@/]*@#://\1:***@#' <<<"$STEADFAST_TEST_DATABASE_URL")"
	psql -w "$STEADFAST_TEST_DATABASE_URL" -Atqc 'select version()' >&2
	ensure_password_auth
	ensure_pgbouncer
}

# vacuum_test_catalog: every test schema created and dropped leaves dead rows in the system
# catalogs, and this machine's PostgreSQL runs without autovacuum (one long-lived machine
# reached a 296 MB pg_attribute with 1.4 million dead rows); a plain VACUUM after each run
# lets the next run reuse that space. Never fails the run.
vacuum_test_catalog() {
	[[ -n ${STEADFAST_TEST_DATABASE_URL:-} ]] || return 0
	psql -w -q "$STEADFAST_TEST_DATABASE_URL" -c 'VACUUM pg_catalog.pg_attribute, pg_catalog.pg_class,
		pg_catalog.pg_depend, pg_catalog.pg_type, pg_catalog.pg_index, pg_catalog.pg_attrdef,
		pg_catalog.pg_constraint, pg_catalog.pg_proc, pg_catalog.pg_namespace, pg_catalog.pg_trigger,
		pg_catalog.pg_sequence' >/dev/null 2>&1 || log "catalog VACUUM skipped (not allowed for this user?)"
}

cleanup_test_machine() {
	vacuum_test_catalog
	cleanup
}
