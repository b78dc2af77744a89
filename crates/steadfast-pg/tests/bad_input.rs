//! Bad provider input: database URLs and schema names are refused before anything connects
//! or is written; the schema reaches SQL only quoted; no Rust code builds SQL from values;
//! passwords never appear in errors, `Debug` output, source chains or tracing logs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use steadfast_pg::{PostgresProvider, ProviderOptions, SetupError};

// ---------------------------------------------------------------- captured TRACE log

#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every tracing record of this test binary, at TRACE level, from every thread.
/// Logged once when the capture is installed, so a test can tell a live capture from one
/// that sees nothing.
const CAPTURE_MARK: &str = "log capture installed";

fn captured_log() -> &'static LogBuffer {
    static LOG: OnceLock<LogBuffer> = OnceLock::new();
    LOG.get_or_init(|| {
        let buffer = LogBuffer::default();
        let writer = buffer.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .init();
        tracing::info!(target: "steadfast_test", "{CAPTURE_MARK}");
        buffer
    })
}

fn log_text() -> String {
    String::from_utf8_lossy(&captured_log().0.lock().unwrap()).into_owned()
}

/// Display, Debug and every source of `e`.
fn every_rendering(e: &SetupError) -> Vec<String> {
    let mut out = vec![e.to_string(), format!("{e:?}"), format!("{e:#?}")];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push(s.to_string());
        out.push(format!("{s:?}"));
        source = s.source();
    }
    out
}

fn assert_secret_absent(e: &SetupError, secrets: &[&str]) {
    for text in every_rendering(e).into_iter().chain([log_text()]) {
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "secret {secret:?} leaked in: {text}"
            );
        }
    }
}

fn options(url: &str) -> ProviderOptions {
    let mut o = ProviderOptions::new(url).with_schema(common::unique_schema("badinput"));
    o.max_connections = 2;
    o.acquire_timeout = Duration::from_secs(5);
    o
}

// ---------------------------------------------------------------- fake servers

/// A TCP server on 127.0.0.1 that counts connections and hands each to `serve`.
struct FakeServer {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl FakeServer {
    fn start(serve: fn(TcpStream)) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || serve(stream));
            }
        });
        Self { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

fn hang_up(stream: TcpStream) {
    drop(stream);
}

fn read_message_body(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).ok()?;
    let len = u32::from_be_bytes(len) as usize;
    let mut body = vec![0u8; len.checked_sub(4)?];
    stream.read_exact(&mut body).ok()?;
    Some(body)
}

/// Speaks just enough of the PostgreSQL protocol to ask for a cleartext password, then
/// fails the login with a message that echoes the password back (as a hostile or buggy
/// server could), so the test proves the scrubbing, not the server's discretion.
fn ask_password_then_echo_it(mut stream: TcpStream) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // SSLRequest (8 bytes, code 80877103) is answered "N"; then the startup message.
    let Some(first) = read_message_body(&mut stream) else {
        return;
    };
    if first == 80877103u32.to_be_bytes() {
        stream.write_all(b"N").unwrap();
        if read_message_body(&mut stream).is_none() {
            return;
        }
    }
    // AuthenticationCleartextPassword.
    stream.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 3]).unwrap();
    let mut tag = [0u8; 1];
    if stream.read_exact(&mut tag).is_err() || tag[0] != b'p' {
        return;
    }
    let Some(password) = read_message_body(&mut stream) else {
        return;
    };
    let password = String::from_utf8_lossy(&password)
        .trim_end_matches('\0')
        .to_string();
    let mut fields = Vec::new();
    for (code, value) in [
        (b'S', "FATAL".to_string()),
        (b'V', "FATAL".to_string()),
        (b'C', "28P01".to_string()),
        (
            b'M',
            format!("password authentication failed (you sent {password})"),
        ),
    ] {
        fields.push(code);
        fields.extend_from_slice(value.as_bytes());
        fields.push(0);
    }
    fields.push(0);
    let mut message = vec![b'E'];
    message.extend_from_slice(&((fields.len() + 4) as u32).to_be_bytes());
    message.extend_from_slice(&fields);
    let _ = stream.write_all(&message);
}

// ---------------------------------------------------------------- URLs

#[tokio::test]
async fn bad_urls_are_refused_before_connecting_and_never_echoed() {
    captured_log();
    let server = FakeServer::start(hang_up);
    let p = server.port;
    let long_path = "d".repeat(5000);
    let cases: Vec<(String, &str)> = vec![
        (
            format!("postgres://u:hunter2@127.0.0.1:{p}/db\0"),
            "control characters",
        ),
        (
            format!("postgres://u:hunter2@127.0.0.1:{p}/db\r\nx"),
            "control characters",
        ),
        (
            format!("postgres://u:hunter2\t@127.0.0.1:{p}/db"),
            "control characters",
        ),
        (
            format!("postgres://u:hunter2@127.0.0.1:{p}/{long_path}"),
            "1 to 4096 bytes",
        ),
        (String::new(), "1 to 4096 bytes"),
        (
            format!("mysql://u:hunter2@127.0.0.1:{p}/db"),
            "must start with postgres://",
        ),
        (
            format!(" postgres://u:hunter2@127.0.0.1:{p}/db"),
            "must start with postgres://",
        ),
        (
            format!("postgres://u:hunter2@127.0.0.1:{p}0000/db"),
            "not a valid URL",
        ),
        (
            format!("postgres://u:hunter2@[::1/db?port={p}"),
            "not a valid URL",
        ),
        (
            format!("postgres://u@127.0.0.1:{p}/db?passwd=hunter2"),
            "unknown query parameter \"passwd\"",
        ),
        (
            format!("postgres://u@127.0.0.1:{p}/db?hunter2=1"),
            "unknown query parameter \"hunter2\"",
        ),
        (
            format!("postgres://u:hunter2@127.0.0.1:{p}/db?sslmode=hunter2"),
            "sslmode must be one of",
        ),
    ];
    for (url, rule) in &cases {
        let e = PostgresProvider::connect_with_options(options(url))
            .await
            .err()
            .unwrap_or_else(|| panic!("{rule}: accepted"));
        assert!(matches!(e, SetupError::InvalidOptions(_)), "{rule}: {e:?}");
        let text = e.to_string();
        assert!(text.contains("database_url"), "{text}");
        assert!(text.contains(rule), "expected {rule:?} in {text}");
        // "hunter2" as a parameter *name* is echoed on purpose (it is a name); every other
        // rendering must hide the value.
        if !rule.contains("\"hunter2\"") {
            assert_secret_absent(&e, &["hunter2"]);
        }
    }
    assert_eq!(server.accepted(), 0, "a bad URL reached the network");
}

#[tokio::test]
async fn connection_failures_hide_the_password_everywhere() {
    captured_log();
    let server = FakeServer::start(hang_up);
    let url = format!(
        "postgres://alice:S3cret%2Fhangup@127.0.0.1:{}/db?sslmode=disable",
        server.port
    );
    let e = PostgresProvider::connect_with_options(options(&url))
        .await
        .err()
        .expect("the server hangs up");
    assert!(matches!(e, SetupError::Connect(_)), "{e:?}");
    assert!(server.accepted() >= 1, "the fake server was never reached");
    // The capture is live (a connection refused this way logs nothing of its own; the
    // test used to rely on other tests' records and failed when it ran first or alone).
    assert!(
        log_text().contains(CAPTURE_MARK),
        "the log capture saw nothing"
    );
    assert_secret_absent(
        &e,
        &["S3cret/hangup", "S3cret%2Fhangup", &url, "postgres://alice"],
    );
}

#[tokio::test]
async fn a_server_echoing_the_password_is_scrubbed() {
    captured_log();
    let server = FakeServer::start(ask_password_then_echo_it);
    for (url, secret) in [
        (
            format!(
                "postgres://bob:Echo%20Me%21x9@127.0.0.1:{}/db?sslmode=disable",
                server.port
            ),
            "Echo Me!x9",
        ),
        (
            format!(
                "postgres://bob@127.0.0.1:{}/db?password=QueryPw-77&sslmode=prefer",
                server.port
            ),
            "QueryPw-77",
        ),
    ] {
        let e = PostgresProvider::connect_with_options(options(&url))
            .await
            .err()
            .expect("the fake server refuses the login");
        let text = e.to_string();
        assert!(matches!(e, SetupError::Connect(_)), "{e:?}");
        // The server's message arrived (so the password really was sent and echoed)...
        assert!(
            text.contains("password authentication failed (you sent ***)"),
            "{text}"
        );
        // ...and no rendering or log line holds it.
        assert_secret_absent(&e, &[secret, &url]);
    }
    assert!(server.accepted() >= 2);
}

#[tokio::test]
async fn real_server_errors_hide_the_password() {
    captured_log();
    // The test server trusts local connections, so the password is accepted and ignored and
    // the server refuses because the database does not exist (a server that checks passwords
    // refuses the password instead; either way it is an error that must not show it).
    let mut parsed = url::Url::parse(&common::database_url()).unwrap();
    parsed.set_password(Some("RealPw-31")).unwrap();
    parsed.set_path("/steadfast_no_such_db");
    let url = parsed.to_string();
    let e = PostgresProvider::connect_with_options(options(&url))
        .await
        .err()
        .expect("the database does not exist");
    let text = e.to_string();
    assert!(
        text.contains("does not exist") || text.contains("authentication"),
        "{text}"
    );
    assert_secret_absent(&e, &["RealPw-31", &url]);
}

#[tokio::test]
async fn a_working_connection_logs_no_password() {
    captured_log();
    // The test server trusts local connections, so any password is accepted and ignored.
    let mut parsed = url::Url::parse(&common::database_url()).unwrap();
    if parsed.password().is_none() {
        parsed.set_password(Some("WorkingPw-8")).unwrap();
    }
    let secret = parsed.password().unwrap().to_string();
    let schema = common::unique_schema("pwlog");
    let mut o = ProviderOptions::new(parsed.to_string()).with_schema(schema.clone());
    o.max_connections = 2;
    let provider = PostgresProvider::connect_with_options(o.clone())
        .await
        .expect("trust authentication ignores the password");
    provider.close().await;
    common::drop_schema(&schema).await;
    let log = log_text();
    assert!(
        log.contains("applied migration"),
        "the TRACE log was not captured"
    );
    for text in [log, format!("{o:?}")] {
        assert!(!text.contains(&secret), "password in: {text}");
    }
}

#[test]
fn options_debug_hides_the_url() {
    let o = ProviderOptions::new("postgres://u:DebugPw-5@h/db");
    let text = format!("{o:?}{o:#?}");
    assert!(
        !text.contains("DebugPw-5") && !text.contains("postgres://"),
        "{text}"
    );
}

// ---------------------------------------------------------------- schema names

#[tokio::test]
async fn bad_schema_names_are_refused_and_nothing_is_written() {
    let pool = common::admin_pool().await;
    let names_before: Vec<String> = sqlx::query_scalar("SELECT nspname::text FROM pg_namespace")
        .fetch_all(&pool)
        .await
        .unwrap();
    let mut bad = vec![
        String::new(),
        "pg_catalog".into(),
        "PG_Steadfast".into(),
        "pg_toast".into(),
        "information_schema".into(),
        "INFORMATION_SCHEMA".into(),
        "1abc".into(),
        "a\"b".into(),
        "x\"; DROP SCHEMA public CASCADE; --".into(),
        "a;b".into(),
        "a b".into(),
        "a.b".into(),
        "a-b".into(),
        "a\0b".into(),
        "a\nb".into(),
        "é".into(),
        "ſteadfast".into(),
        "a".repeat(64),
    ];
    bad.push(format!("{}$", "a".repeat(10)));
    for schema in &bad {
        let e = PostgresProvider::connect_with_schema(&common::database_url(), schema)
            .await
            .err()
            .unwrap_or_else(|| panic!("{schema:?} accepted"));
        assert!(matches!(e, SetupError::InvalidOptions(_)), "{e:?}");
        assert!(e.to_string().contains("schema"), "{e}");
    }
    let names_after: Vec<String> = sqlx::query_scalar("SELECT nspname::text FROM pg_namespace")
        .fetch_all(&pool)
        .await
        .unwrap();
    let created: Vec<_> = names_after
        .iter()
        .filter(|n| !names_before.contains(n) && bad.contains(n))
        .collect();
    assert!(created.is_empty(), "schemas created: {created:?}");
    pool.close().await;
}

#[tokio::test]
async fn a_mixed_case_schema_is_used_exactly_as_given() {
    // Quoted everywhere, so case is preserved and the lower-case name stays untouched.
    let schema = format!("Sf_Mixed_{}", common::unique_schema("case"));
    let mut o = ProviderOptions::new(common::database_url()).with_schema(schema.clone());
    o.max_connections = 2;
    let provider = PostgresProvider::connect_with_options(o).await.unwrap();
    provider.close().await;
    let pool = common::admin_pool().await;
    let exists = |name: String| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, bool>(
                "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
            )
            .bind(name)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    assert!(exists(schema.clone()).await);
    assert!(!exists(schema.to_lowercase()).await);
    common::drop_schema(&schema).await;
    pool.close().await;
}

// ---------------------------------------------------------------- SQL text

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_with_extension(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_with_extension(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Text outside SQL comments and string literals (`'…'`), with each literal replaced by
/// `''`: a placeholder in there would be a value, not an identifier.
fn sql_code_only(sql: &str) -> (String, Vec<String>) {
    let mut code = String::new();
    let mut literals = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '-' if chars.peek() == Some(&'-') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        code.push('\n');
                        break;
                    }
                }
            }
            '\'' => {
                let mut literal = String::new();
                while let Some(c) = chars.next() {
                    if c == '\'' {
                        if chars.peek() == Some(&'\'') {
                            chars.next();
                            literal.push('\'');
                            continue;
                        }
                        break;
                    }
                    literal.push(c);
                }
                literals.push(literal);
                code.push_str("''");
            }
            _ => code.push(c),
        }
    }
    (code, literals)
}

#[test]
fn every_sql_file_names_the_schema_only_through_the_quoted_placeholder() {
    let mut files = Vec::new();
    files_with_extension(&crate_dir().join("queries"), "sql", &mut files);
    files_with_extension(&crate_dir().join("migrations"), "sql", &mut files);
    assert!(files.len() > 50, "found only {} SQL files", files.len());
    let mut placeholders = 0;
    for file in &files {
        let sql = std::fs::read_to_string(file).unwrap();
        let name = file.display();
        let (code, literals) = sql_code_only(&sql);
        for literal in &literals {
            assert!(
                !literal.contains("__SCHEMA__"),
                "{name}: schema placeholder inside a string literal"
            );
        }
        // The placeholder stands alone as an identifier: never quoted by hand (the renderer
        // quotes it), never glued to other identifier characters.
        for (at, _) in code.match_indices("__SCHEMA__") {
            placeholders += 1;
            let before = code[..at].chars().next_back();
            let after = code[at + "__SCHEMA__".len()..].chars().next();
            let glued = |c: Option<char>| {
                c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '"')
            };
            assert!(
                !glued(before) && !glued(after),
                "{name}: placeholder glued to {before:?}/{after:?}"
            );
        }
        // No hard-coded schema (the default or the duroxide-pg one) qualifies a name.
        for fixed in ["steadfast.", "\"steadfast\".", "public."] {
            assert!(
                !code.to_lowercase().contains(fixed),
                "{name}: hard-coded schema {fixed}"
            );
        }
    }
    assert!(placeholders > 100, "only {placeholders} placeholders found");
}

/// Rust string literals (plain and raw) of `source`, outside comments.
fn rust_string_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = source.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == '/' && bytes.get(i + 1) == Some(&'/') {
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && bytes.get(i + 1) == Some(&'*') {
            while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '\'' {
            // A char literal ('"', '\'') or a lifetime: skip the quoted char if any.
            if bytes.get(i + 2) == Some(&'\'') {
                i += 3;
            } else if bytes.get(i + 1) == Some(&'\\') && bytes.get(i + 3) == Some(&'\'') {
                i += 4;
            } else {
                i += 1;
            }
        } else if c == 'r'
            && matches!(bytes.get(i + 1), Some('#') | Some('"'))
            && (i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_'))
        {
            let mut hashes = 0;
            let mut j = i + 1;
            while bytes.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if bytes.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            let start = j + 1;
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let rest: String = bytes[start..].iter().collect();
            let end = rest.find(&close).expect("unterminated raw string");
            out.push(rest[..end].to_string());
            i = start + rest[..end].chars().count() + close.chars().count();
        } else if c == '"' {
            let mut literal = String::new();
            i += 1;
            while i < bytes.len() && bytes[i] != '"' {
                if bytes[i] == '\\' {
                    literal.push(bytes[i]);
                    i += 1;
                }
                literal.push(bytes[i]);
                i += 1;
            }
            out.push(literal);
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Words that start or shape a SQL statement; none belongs in a Rust string of the
/// provider (SQL lives in .sql files, loaded with include_str!).
const SQL_WORDS: &[&str] = &[
    "SELECT ",
    "INSERT ",
    "UPDATE ",
    "DELETE ",
    "CREATE ",
    "DROP ",
    "ALTER ",
    "TRUNCATE ",
    "GRANT ",
    "LISTEN ",
    "NOTIFY ",
    " FROM ",
    " WHERE ",
    " SET ",
    " INTO ",
    "VALUES",
];

#[test]
fn no_rust_code_builds_sql_from_values() {
    let mut files = Vec::new();
    files_with_extension(&crate_dir().join("src"), "rs", &mut files);
    assert!(files.len() > 10);
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let name = file.display();
        for literal in rust_string_literals(&source) {
            for word in SQL_WORDS {
                assert!(
                    !literal.contains(word),
                    "{name}: SQL in a Rust string: {literal:?}"
                );
            }
        }
        // Statements come from rendered .sql files only.
        let compact: String = source.split_whitespace().collect();
        for call in [
            "query(&format!",
            "query(format!",
            "query_scalar(&format!",
            "query_scalar(format!",
            "query_as(&format!",
            "scalar(&format!",
            "execute(&format!",
            "execute(format!",
            "execute(&*format!",
        ] {
            assert!(!compact.contains(call), "{name}: {call}");
        }
        for (at, _) in compact.match_indices("include_str!(") {
            let arg = &compact[at + "include_str!(".len()..];
            assert!(
                arg.starts_with("\"../queries/")
                    || arg.starts_with("\"../migrations/")
                    || arg.starts_with("\"../functions/")
                    || arg.starts_with("concat!(\"../queries/"),
                "{name}: include_str! of something other than a .sql file: {}",
                &arg[..arg.len().min(60)]
            );
        }
        let is_renderer = file.ends_with("schema.rs");
        assert!(
            is_renderer || !compact.contains("__SCHEMA__\","),
            "{name}: schema placeholder replaced outside schema.rs"
        );
    }
}

#[test]
fn the_literal_scanner_sees_sql_in_rust_strings() {
    // The scanner above must catch what it claims to catch.
    let sample = r###"let q = format!("SELECT * FROM \"{s}\".t WHERE id = {id}"); // SELECT ok in comment
        let r = r#"UPDATE t SET x = 1"#; let c = '"'; let s = "plain";"###;
    let literals = rust_string_literals(sample);
    assert_eq!(literals.len(), 3, "{literals:?}");
    assert!(literals[0].contains("SELECT * FROM"));
    assert_eq!(literals[1], "UPDATE t SET x = 1");
    assert_eq!(literals[2], "plain");
}
