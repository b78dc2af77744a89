//! A throwaway PostgreSQL cluster (initdb + pg_ctl on a free port), for the faults that
//! must never touch the shared server: restarts, crashes, terminated backends, exhausted
//! connection slots. As root the server runs as the OS user `postgres` (like `.ci/run`).

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    server_options: String,
}

fn pg_bin_dir() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return bin;
    }
    let out = Command::new("sh")
        .args(["-c", "dirname \"$(command -v initdb)\""])
        .output()
        .expect("sh");
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        !dir.is_empty() && dir != ".",
        "initdb not found: install the PostgreSQL server (apt-get install postgresql)"
    );
    PathBuf::from(dir)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Run a server tool, as `postgres` when we are root (initdb and postgres refuse root).
fn as_postgres(program: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args).current_dir("/");
    cmd.output().expect("running a PostgreSQL server tool")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    /// initdb and start a trust-auth cluster allowing `max_connections` connections.
    /// Blocking: call from `spawn_blocking`.
    pub fn start(max_connections: u32) -> Cluster {
        Self::start_with(max_connections, false)
    }

    /// A cluster that takes TLS connections only (`hostssl` trust, plain connections
    /// rejected), on `localhost` (127.0.0.1 and ::1), with a self-signed certificate for
    /// `localhost` ([`Cluster::certificate`]). Blocking.
    pub fn start_tls() -> Cluster {
        Self::start_with(20, true)
    }

    fn start_with(max_connections: u32, tls: bool) -> Cluster {
        let bin = pg_bin_dir();
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("steadfast-faults-pg-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["postgres:", dir.to_str().unwrap()])
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown postgres {dir:?}");
        }
        let data = dir.join("data");
        let out = as_postgres(
            &bin.join("initdb"),
            &[
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "-D",
                data.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut server_options = format!(
            "-p {port} -c unix_socket_directories={} -c fsync=off -c max_connections={max_connections} -c superuser_reserved_connections=0",
            dir.display()
        );
        if tls {
            let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
            self_signed_certificate(&cert, &key, "localhost");
            self_signed_certificate(&dir.join("other.crt"), &dir.join("other.key"), "other");
            let hba = "local all all trust\n\
                       hostssl all all 127.0.0.1/32 trust\n\
                       hostssl all all ::1/128 trust\n\
                       hostnossl all all all reject\n";
            std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
            if is_root() {
                let ok = Command::new("chown")
                    .arg("postgres:")
                    .args([&cert, &key, &data.join("pg_hba.conf")])
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "chown postgres the TLS files");
            }
            server_options.push_str(&format!(
                " -c listen_addresses=localhost -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                cert.display(),
                key.display()
            ));
        } else {
            server_options.push_str(" -c listen_addresses=127.0.0.1");
        }
        let cluster = Cluster {
            server_options,
            dir,
            bin,
            port,
        };
        cluster.pg_ctl_start();
        cluster
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The URL by host name, for TLS clients that check it (`localhost`).
    pub fn localhost_url(&self) -> String {
        format!("postgres://postgres@localhost:{}/postgres", self.port)
    }

    /// The self-signed certificate a [`Cluster::start_tls`] server presents, and a
    /// certificate of another, unrelated issuer.
    pub fn certificate(&self) -> (PathBuf, PathBuf) {
        (self.dir.join("server.crt"), self.dir.join("other.crt"))
    }

    fn data(&self) -> String {
        self.dir.join("data").to_str().unwrap().to_string()
    }

    fn pg_ctl(&self, args: &[&str]) -> std::process::Output {
        as_postgres(&self.bin.join("pg_ctl"), args)
    }

    fn pg_ctl_start(&self) {
        let log = self.dir.join("server.log");
        let out = self.pg_ctl(&[
            "-D",
            &self.data(),
            "-l",
            log.to_str().unwrap(),
            "-w",
            "-t",
            "60",
            "-o",
            &self.server_options,
            "start",
        ]);
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Orderly restart (`pg_ctl restart -m fast`): every connection is closed.
    pub fn restart(&self) {
        let out = self.pg_ctl(&["-D", &self.data(), "-m", "fast", "-w", "-t", "60", "stop"]);
        assert!(out.status.success(), "pg_ctl stop -m fast failed");
        self.pg_ctl_start();
    }

    /// Crash (`pg_ctl stop -m immediate`: no checkpoint, recovery on start), stay down for
    /// `down`, start again.
    pub fn crash_and_start(&self, down: std::time::Duration) {
        let out = self.pg_ctl(&[
            "-D",
            &self.data(),
            "-m",
            "immediate",
            "-w",
            "-t",
            "60",
            "stop",
        ]);
        assert!(out.status.success(), "pg_ctl stop -m immediate failed");
        std::thread::sleep(down);
        self.pg_ctl_start();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A self-signed certificate and its key (mode 0600, as the server wants it) for `name`.
fn self_signed_certificate(cert: &Path, key: &Path, name: &str) {
    let out = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={name}")])
        .args(["-addext", &format!("subjectAltName=DNS:{name}")])
        .arg("-keyout")
        .arg(key)
        .arg("-out")
        .arg(cert)
        .output()
        .expect("openssl (Debian package openssl) makes a test certificate");
    assert!(
        out.status.success(),
        "openssl req failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Start a cluster without blocking the async test.
pub async fn start_cluster(max_connections: u32) -> Cluster {
    tokio::task::spawn_blocking(move || Cluster::start(max_connections))
        .await
        .unwrap()
}
