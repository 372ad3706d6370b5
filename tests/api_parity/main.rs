//! API parity check (issue 12): lists every public core operation (read from `src/` with
//! `syn`, see `core_ops`) and fails when a binding lacks one.
//!
//! `bindings/api-parity.toml` names, per operation, its symbol in Kotlin, Swift, C, Python and
//! PHP, or why it does not apply there. The check fails when a core operation has no entry,
//! when a named symbol does not exist in its binding (including one that disappeared), when an
//! entry is marked `missing`, when an entry names something that is no longer a core operation,
//! and when `docs/api-parity.md` differs from the table it renders
//! (`STOREFRONT_BLESS=1 cargo test --test api_parity` rewrites it). Run by
//! `.ci/suites/05-api-parity.sh`. The self-tests below feed the readers made-up sources so a
//! reader that finds nothing (or everything) cannot pass.

mod bindings;
mod core_ops;
mod mapping;
mod report;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The full check: prints the table, fails with the list of gaps.
#[test]
fn every_core_operation_is_in_every_binding() {
    let root = root();
    let core = core_ops::read_core(&root.join("src")).expect("read the core's source");
    assert!(
        core.operations
            .contains_key("Client::create_merchant_payment")
            && core.operations.contains_key("UserSession::create_order"),
        "the core reader found none of the known endpoint calls: {:?}",
        core.operations.keys().collect::<Vec<_>>()
    );
    let mapping = match mapping::parse(&read(&root.join("bindings/api-parity.toml"))) {
        Ok(m) => m,
        Err(errors) => panic!("bindings/api-parity.toml:\n  {}", errors.join("\n  ")),
    };
    let surfaces = bindings::read_all(&root).expect("read the bindings");
    let cmp = report::compare(&core, &mapping, &surfaces);
    let doc = report::render(&core, &cmp);
    println!("{doc}");

    let doc_path = root.join("docs/api-parity.md");
    let bless = std::env::var_os("STOREFRONT_BLESS").is_some_and(|v| v == "1");
    let mut failures = cmp.failures();
    if bless {
        std::fs::write(&doc_path, &doc).expect("write docs/api-parity.md");
    } else if std::fs::read_to_string(&doc_path).ok().as_deref() != Some(doc.as_str()) {
        failures.push(
            "docs/api-parity.md is stale: run STOREFRONT_BLESS=1 cargo test --test api_parity"
                .to_owned(),
        );
    }
    assert!(
        failures.is_empty(),
        "API parity: {} problem(s):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

/// The classification rules on a made-up crate: operations kept, data handling excluded,
/// private and `#[cfg]` items ignored.
#[test]
fn core_reader_applies_the_rules() {
    let src = r#"
        mod private { pub struct Hidden; impl Hidden { pub async fn call(&self) {} } }
        mod client { pub struct Client; pub struct Builder;
            impl Client {
                pub fn new(c: u8) -> Result<Self, ()> { Ok(Client) }
                pub async fn fetch(&self, id: &str) -> Result<u8, ()> { Ok(0) }
                pub fn user(&self, token: &str) -> u8 { 0 }
                pub fn config(&self) -> &u8 { &0 }
                pub fn try_state(&self) -> Result<u8, ()> { Ok(0) }
                pub(crate) fn internal(&self, x: u8) {}
                fn private(&self, x: u8) {}
            }
            impl Builder {
                pub fn new() -> Self { Builder }
                pub fn with_x(mut self, x: u8) -> Self { self }
                pub fn build(self, y: u8) -> Option<Self> { None }
            }
        }
        pub use client::{Client, Builder};
        pub mod money { pub struct Amount(u8);
            impl std::str::FromStr for Amount { type Err = (); fn from_str(s: &str) -> Result<Self, ()> { Err(()) } }
            impl std::fmt::Display for Amount { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) } }
            pub fn check(x: u8) -> bool { true }
        }
        mod auth { pub trait Provider { fn token(&self) -> u8; } pub fn helper(x: u8) {} }
        pub use auth::Provider;
        #[cfg(feature = "ffi")] pub mod ffi { pub fn sf_call(x: u8) {} }
        #[cfg(feature = "store-x")] pub mod inbox { pub struct Inbox; impl Inbox { pub async fn claim(&self, n: u8) {} } }
        #[cfg(test)] mod tests { impl super::Client { pub fn test_only(&self, x: u8) {} } }
    "#;
    let core = core_ops::read_source(src).expect("parse");
    let ops: Vec<(&str, &str)> = core
        .operations
        .iter()
        .map(|(k, v)| (k.as_str(), v.label()))
        .collect();
    assert_eq!(
        ops,
        vec![
            ("Amount::from_str", "parse"),
            ("Builder::build", "sync"),
            ("Client::fetch", "async"),
            ("Client::new", "sync"),
            ("Client::try_state", "sync"),
            ("Client::user", "sync"),
            ("Inbox::claim", "async"),
            ("Provider::token", "callback"),
            ("money::check", "sync"),
        ]
    );
    let excluded: Vec<(&str, &str)> = core
        .excluded
        .iter()
        .map(|(k, v)| (k.as_str(), v.label()))
        .collect();
    assert_eq!(
        excluded,
        vec![
            ("Builder::new", "plain constructor"),
            ("Builder::with_x", "builder"),
            ("Client::config", "accessor"),
        ]
    );
}

/// The binding readers find declared symbols and nothing else.
#[test]
fn binding_readers_find_declared_symbols_only() {
    let mut kt = bindings::Surface::default();
    bindings::kotlin_generated(
        "open class Client: Disposable, ClientInterface\n{\n    constructor(`config`: ClientConfig) :\n    override suspend fun `createOrder`(`r`: R) : String {\n    }\n}\npublic object FfiConverterTypeClient {\n    fun `notAMember`(`x`: X) {}\n}\n         fun `parseAmountMinor`(`t`: String): Long {\n",
        &mut kt,
    );
    bindings::kotlin_handwritten(
        "object Storefront {\n    fun client(config: ClientConfig): Client = Client(config)\n}\nfun Client.reconcile(records: List<R>): Flow<R> = flow {}\nsuspend fun <T> UserSession.waitAll(x: T) {}\nclass StorefrontClient private constructor(\n    private val client: Client,\n) : AutoCloseable {\n    fun getOrderAsync(orderNo: String): CompletableFuture<O> = calls.async { x }\n    private fun hidden() = 1\n}\nabstract class Base {\n    fun notCounted() = 1\n}\n",
        &mut kt,
    );
    for present in [
        "Client()",
        "Client.createOrder",
        "parseAmountMinor",
        "Storefront.client",
        "Client.reconcile",
        "UserSession.waitAll",
        "StorefrontClient.getOrderAsync",
    ] {
        assert!(kt.has(present, "."), "kotlin {present}: {kt:?}");
    }
    for absent in [
        "Client.notAMember",
        "notAMember",
        "Client.getOrder",
        "UserSession()",
        "StorefrontClient.hidden",
        "Base.notCounted",
        "notCounted",
    ] {
        assert!(!kt.has(absent, "."), "kotlin {absent} should be absent");
    }

    let mut swift = bindings::Surface::default();
    bindings::swift_source(
        "open class Client: ClientProtocol, @unchecked Sendable {\npublic convenience init(config: ClientConfig)throws  {\n}\nopen func createOrder(request: R)async throws -> String {\n}\n}\npublic struct FfiConverterTypeClient {\n    public static func lift() {}\n}\npublic func FfiConverterTypeClient_lift() {}\npublic func parseAmountMinor(text: String) throws -> Int64 {\n",
        &mut swift,
    );
    assert!(swift.has("Client()", ".") && swift.has("Client.createOrder", "."));
    assert!(swift.has("parseAmountMinor", "."));
    assert!(!swift.has("FfiConverterTypeClient_lift", ".") && !swift.has("Client.lift", "."));

    let c = bindings::c_header(
        "/**\n * sf_in_comment(x)\n */\ntypedef void (*sf_log_callback)(int);\nsf_result sf_client_new(const char *config,\n                        sf_client **out);\nvoid sf_string_free(char *s);\n",
    );
    assert!(c.has("sf_client_new", ".") && c.has("sf_string_free", "."));
    assert!(!c.has("sf_in_comment", ".") && !c.has("sf_log_callback", "."));

    let mut php = bindings::Surface::default();
    bindings::php_source(
        "<?php\nfinal class Client\n{\n    public function __construct(array $c) {}\n    public function createOrder(): string {}\n    private function hidden(): void {}\n    public static function persistent(array $c): self {}\n}\n",
        &mut php,
    );
    assert!(php.has("Client::createOrder", "::") && php.has("Client::persistent", "::"));
    assert!(php.has("Client()", "::"));
    assert!(!php.has("Client::hidden", "::") && !php.has("Client::getOrder", "::"));
}

/// The Python reader (ast) on the real package: exported classes and functions only.
#[test]
fn python_reader_uses_all_and_ast() {
    let py = bindings::python(&root().join("bindings/python/storefront")).expect("python3 ast");
    assert!(py.has("Client.create_merchant_payment", "."));
    assert!(py.has("status_version_decision", "."));
    assert!(!py.has("Client._call", ".") && !py.has("product_query", "."));
}

/// The comparison reports every kind of gap.
#[test]
fn comparison_reports_every_gap() {
    let core = core_ops::read_source(
        "pub struct C; impl C { pub async fn a(&self) {} pub async fn b(&self) {} pub async fn d(&self) {} }",
    )
    .expect("parse");
    let mapping = mapping::parse(
        r#"
        [operations."C::a"]
        kotlin = "C.a"
        swift = "C.a"
        c = "sf_a"
        python = ["C.a", "C.gone"]
        php = { not_applicable = "a reason" }
        [operations."C::b"]
        kotlin = { missing = "not exported yet" }
        swift = "C.b"
        c = "sf_b"
        python = "C.b"
        [operations."C::removed"]
        kotlin = "C.x"
        swift = "C.x"
        c = "sf_x"
        python = "C.x"
        php = "C::x"
        "#,
    )
    .expect("mapping parses");
    let mut surfaces = std::collections::BTreeMap::new();
    for b in bindings::BINDINGS {
        let mut s = bindings::Surface::default();
        s.members
            .entry("C".to_owned())
            .or_default()
            .extend(["a".to_owned(), "b".to_owned()]);
        s.free.extend(["sf_a".to_owned(), "sf_b".to_owned()]);
        surfaces.insert(b, s);
    }
    let failures = report::compare(&core, &mapping, &surfaces).failures();
    let expected = [
        "C::a [python]: symbol not found: C.gone",
        "C::b [kotlin]: missing (not exported yet)",
        "C::b [php]: no entry in bindings/api-parity.toml",
        "C::d [c]: no entry in bindings/api-parity.toml",
        "C::removed: in bindings/api-parity.toml but not a public core operation",
    ];
    for e in expected {
        assert!(failures.iter().any(|f| f == e), "{e} not in {failures:#?}");
    }
    assert_eq!(failures.len(), 4 + 5, "{failures:#?}");
}

/// Mapping entries without a reason, or with unknown bindings, are refused.
#[test]
fn mapping_refuses_reasonless_entries() {
    let errors = mapping::parse(
        r#"
        [operations."C::a"]
        php = { not_applicable = "" }
        cobol = "X"
        kotlin = { because = "x" }
        "#,
    )
    .expect_err("refused");
    assert_eq!(errors.len(), 3, "{errors:#?}");
}
