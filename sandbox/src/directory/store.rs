//! The directory domain's data: merchants, OAuth clients, buyers and their platform-coin
//! wallets, payment channels, issued tokens, enabled currencies and platform-coin rates.
//!
//! Data only: no web framework types and no application state. The rules over it are in
//! [`super::rules`] (one wallet debit for every caller).

use std::collections::{BTreeMap, HashMap};

use crate::seed;

/// Default lifetime of issued access tokens, in seconds of the sandbox clock. The lifetime of
/// client-credentials tokens can be changed ([`crate::SandboxOptions::token_lifetime_seconds`],
/// `--token-lifetime`, `PUT /_sandbox/token-lifetime`); it is kept in
/// [`DirectoryStore::token_lifetime_seconds`].
pub const TOKEN_LIFETIME_SECONDS: i64 = 3600;

/// Longest configurable client-credentials token lifetime (365 days), so that an expiry always
/// stays a representable time.
pub const MAX_TOKEN_LIFETIME_SECONDS: i64 = 365 * 86_400;

/// Whether `seconds` is an acceptable client-credentials token lifetime: from 0 (the grant says
/// `expires_in: 0` and the token is expired at once) to [`MAX_TOKEN_LIFETIME_SECONDS`].
pub fn valid_token_lifetime(seconds: i64) -> bool {
    (0..=MAX_TOKEN_LIFETIME_SECONDS).contains(&seconds)
}

/// The directory: who can call, who buys, through which channels, in which currencies. Its
/// `Debug` shows counts only: it holds secrets and tokens.
pub struct DirectoryStore {
    /// Merchants by merchant number.
    pub merchants: BTreeMap<String, Merchant>,
    /// OAuth clients by client id.
    pub clients: BTreeMap<String, OAuthClient>,
    /// Buyers (and their wallets) by user id.
    pub users: BTreeMap<String, User>,
    /// Issued access tokens by token value.
    pub tokens: HashMap<String, AccessToken>,
    /// Lifetime of client-credentials tokens granted from now on, in seconds of the sandbox
    /// clock (default [`TOKEN_LIFETIME_SECONDS`]; see
    /// [`valid_token_lifetime`]). A reset keeps it.
    pub token_lifetime_seconds: i64,
    /// Payment channels by channel identifier (`payment_no`).
    pub channels: BTreeMap<String, Channel>,
    /// Enabled currencies and their precision.
    pub currencies: BTreeMap<String, u32>,
    /// Platform-coin rates by currency (eight-decimal coin per whole unit), seeded from
    /// [`seed::COIN_RATES`]; a currency without one cannot be used for new merchant payments
    /// (422 `currency_rate_unavailable`).
    pub rates: BTreeMap<String, i64>,
}

impl std::fmt::Debug for DirectoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectoryStore")
            .field("merchants", &self.merchants.len())
            .field("clients", &self.clients.len())
            .field("users", &self.users.len())
            .field("tokens", &self.tokens.len())
            .field("channels", &self.channels.len())
            .finish_non_exhaustive()
    }
}

/// A merchant and its settings.
#[derive(Debug, Clone)]
pub struct Merchant {
    /// Merchant number.
    pub merchant_no: String,
    /// Display name (shown on the checkout).
    pub name: String,
    /// Whether the merchant is active.
    pub active: bool,
    /// Whether the merchant forbids anonymous purchase (channels then require login).
    pub forbid_anonymous: bool,
    /// Profile fields returned by GET /openapi/v1/merchant.
    pub profile: serde_json::Value,
    /// Merchant-center default notification setting.
    pub notify_default: Option<NotifyDefault>,
}

/// The merchant-center default notification address and its signing secret.
#[derive(Clone, PartialEq, Eq)]
pub struct NotifyDefault {
    /// Public HTTPS address (loopback allowed in the sandbox).
    pub url: String,
    /// Signing secret.
    pub secret: String,
    /// Enabled after the merchant stored the secret and verified signatures.
    pub enabled: bool,
}

/// An OAuth client registered with the service.
#[derive(Clone)]
pub struct OAuthClient {
    /// Client id.
    pub client_id: String,
    /// Secret of a confidential client; `None` for a public client.
    pub secret: Option<String>,
    /// Merchant the client is bound to, if any.
    pub merchant_no: Option<String>,
    /// Scopes the client is approved for.
    pub approved_scopes: Vec<String>,
}

impl std::fmt::Debug for NotifyDefault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotifyDefault")
            .field("url", &self.url)
            .field("secret", &"[REDACTED]")
            .field("enabled", &self.enabled)
            .finish()
    }
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field("secret", &self.secret.as_ref().map(|_| "[REDACTED]"))
            .field("merchant_no", &self.merchant_no)
            .field("approved_scopes", &self.approved_scopes)
            .finish()
    }
}

/// A buyer of the platform.
#[derive(Debug, Clone)]
pub struct User {
    /// User id.
    pub user_id: String,
    /// Platform-coin wallet balance, eight-decimal fixed point.
    pub wallet: i64,
}

/// Who an access token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A client-credentials token.
    Client,
    /// A user-authorized token for this user.
    User(String),
}

/// An issued access token.
#[derive(Debug, Clone)]
pub struct AccessToken {
    /// Client the token was issued to.
    pub client_id: String,
    /// Client or user.
    pub subject: Subject,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// Expiry on the sandbox clock.
    pub expires_at: time::OffsetDateTime,
}

/// A payment channel.
#[derive(Debug, Clone)]
pub struct Channel {
    /// Real channel identifier.
    pub payment_no: String,
    /// Channel name.
    pub name: String,
    /// `card-provider` or `platform-coin`.
    pub provider: String,
    /// `platform` or `merchant`.
    pub owner: String,
    /// For a merchant-owned channel, the merchant that owns it.
    pub owner_merchant: Option<String>,
    /// Payment currency.
    pub currency: String,
    /// Administrator-assigned card-provider test channel.
    pub test_mode: bool,
    /// Debug assignment: merchants (empty = not set).
    pub debug_merchants: Vec<String>,
    /// Debug assignment: payer users (empty = not set).
    pub debug_payers: Vec<String>,
    /// Whether the channel is enabled.
    pub enabled: bool,
}

impl Channel {
    /// Whether the channel is usable by a merchant for creating a payment (ownership, enabled
    /// state and, for test channels, the merchant part of the debug assignment).
    pub fn available_to_merchant(&self, merchant_no: &str) -> bool {
        if !self.enabled {
            return false;
        }
        if let Some(owner) = &self.owner_merchant
            && owner != merchant_no
        {
            return false;
        }
        if self.test_mode {
            if self.debug_merchants.is_empty() && self.debug_payers.is_empty() {
                return false;
            }
            if !self.debug_merchants.is_empty()
                && !self.debug_merchants.iter().any(|m| m == merchant_no)
            {
                return false;
            }
        }
        true
    }

    /// Whether a given (logged-in or anonymous) buyer may pay through this channel.
    pub fn payable_by(&self, user: Option<&str>) -> bool {
        if self.test_mode && !self.debug_payers.is_empty() {
            return user.is_some_and(|u| self.debug_payers.iter().any(|p| p == u));
        }
        true
    }

    /// `login_required` as the contract defines it for the directory.
    pub fn login_required(&self, merchant: &Merchant) -> bool {
        self.provider == "platform-coin"
            || merchant.forbid_anonymous
            || (self.test_mode && !self.debug_payers.is_empty())
    }
}

impl DirectoryStore {
    /// The directory every sandbox starts with (see [`crate::seed`]).
    pub fn seeded() -> Self {
        let merchants = [
            merchant(seed::MERCHANT_NO, "Sandbox Coffee Roasters", true),
            merchant(seed::OTHER_MERCHANT_NO, "Other Tea House", true),
            merchant(seed::INACTIVE_MERCHANT_NO, "Dormant Goods", false),
        ]
        .into_iter()
        .map(|m| (m.merchant_no.clone(), m))
        .collect();

        let all: Vec<String> = seed::ALL_SCOPES.iter().map(|s| s.to_string()).collect();
        let without_collection: Vec<String> = all
            .iter()
            .filter(|s| !s.starts_with("merchant_payments."))
            .cloned()
            .collect();
        let clients = [
            client(
                seed::MERCHANT_CLIENT_ID,
                Some(seed::MERCHANT_CLIENT_SECRET),
                Some(seed::MERCHANT_NO),
                all.clone(),
            ),
            client(
                seed::CATALOG_CLIENT_ID,
                Some(seed::CATALOG_CLIENT_SECRET),
                Some(seed::MERCHANT_NO),
                without_collection,
            ),
            client(
                seed::PUBLIC_CLIENT_ID,
                None,
                Some(seed::MERCHANT_NO),
                vec!["openid".into(), "products.read".into()],
            ),
            client(
                seed::INACTIVE_CLIENT_ID,
                Some(seed::INACTIVE_CLIENT_SECRET),
                Some(seed::INACTIVE_MERCHANT_NO),
                all.clone(),
            ),
            client(
                seed::OTHER_CLIENT_ID,
                Some(seed::OTHER_CLIENT_SECRET),
                Some(seed::OTHER_MERCHANT_NO),
                all.clone(),
            ),
            client(
                seed::UNBOUND_CLIENT_ID,
                Some(seed::UNBOUND_CLIENT_SECRET),
                None,
                all,
            ),
        ]
        .into_iter()
        .map(|c| (c.client_id.clone(), c))
        .collect();

        let users = [
            (seed::USER_ALICE, seed::ALICE_WALLET),
            (seed::USER_BOB, seed::BOB_WALLET),
            (seed::USER_CAROL, seed::CAROL_WALLET),
        ]
        .into_iter()
        .map(|(id, wallet)| {
            (
                id.to_owned(),
                User {
                    user_id: id.to_owned(),
                    wallet,
                },
            )
        })
        .collect();

        let channels = [
            Channel {
                payment_no: seed::CHANNEL_PLATFORM_COIN.into(),
                name: "Platform Coin".into(),
                provider: "platform-coin".into(),
                owner: "platform".into(),
                owner_merchant: None,
                currency: seed::PLATFORM_COIN.into(),
                test_mode: false,
                debug_merchants: vec![],
                debug_payers: vec![],
                enabled: true,
            },
            Channel {
                payment_no: seed::CHANNEL_CARD_USD.into(),
                name: "Card (USD)".into(),
                provider: "card-provider".into(),
                owner: "platform".into(),
                owner_merchant: None,
                currency: "USD".into(),
                test_mode: false,
                debug_merchants: vec![],
                debug_payers: vec![],
                enabled: true,
            },
            Channel {
                payment_no: seed::CHANNEL_CARD_TEST.into(),
                name: "Card test channel".into(),
                provider: "card-provider".into(),
                owner: "platform".into(),
                owner_merchant: None,
                currency: "USD".into(),
                test_mode: true,
                debug_merchants: vec![seed::MERCHANT_NO.into()],
                debug_payers: vec![seed::USER_ALICE.into()],
                enabled: true,
            },
            Channel {
                payment_no: seed::CHANNEL_CARD_EUR_OTHER.into(),
                name: "Tea House card (EUR)".into(),
                provider: "card-provider".into(),
                owner: "merchant".into(),
                owner_merchant: Some(seed::OTHER_MERCHANT_NO.into()),
                currency: "EUR".into(),
                test_mode: false,
                debug_merchants: vec![],
                debug_payers: vec![],
                enabled: true,
            },
        ]
        .into_iter()
        .map(|c| (c.payment_no.clone(), c))
        .collect();

        DirectoryStore {
            merchants,
            clients,
            users,
            tokens: HashMap::new(),
            token_lifetime_seconds: TOKEN_LIFETIME_SECONDS,
            channels,
            currencies: seed::CURRENCIES
                .iter()
                .map(|(c, d)| (c.to_string(), *d))
                .collect(),
            rates: seed::COIN_RATES
                .iter()
                .map(|(c, r)| (c.to_string(), *r))
                .collect(),
        }
    }
}

fn merchant(merchant_no: &str, name: &str, active: bool) -> Merchant {
    let slug = name.to_lowercase().replace(' ', "-");
    Merchant {
        merchant_no: merchant_no.to_owned(),
        name: name.to_owned(),
        active,
        forbid_anonymous: false,
        profile: serde_json::json!({
            "merchant_no": merchant_no,
            "name": name,
            "logo_url": format!("https://static.sandbox.invalid/{slug}/logo.png"),
            "short_description": format!("{name}, a sandbox merchant"),
            "description": format!("{name} sells through the storefront sandbox."),
            "business_scope": "Retail",
            "website_url": format!("https://{slug}.sandbox.invalid"),
            "contact": "support@sandbox.invalid",
        }),
        notify_default: None,
    }
}

fn client(
    id: &str,
    secret: Option<&str>,
    merchant_no: Option<&str>,
    scopes: Vec<String>,
) -> OAuthClient {
    OAuthClient {
        client_id: id.to_owned(),
        secret: secret.map(str::to_owned),
        merchant_no: merchant_no.map(str::to_owned),
        approved_scopes: scopes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Secrets never appear in Debug output: a seeded client secret, a notification secret.
    #[test]
    fn debug_output_redacts_client_and_notification_secrets() {
        let mut directory = DirectoryStore::seeded();
        directory
            .merchants
            .get_mut(seed::MERCHANT_NO)
            .unwrap()
            .notify_default = Some(NotifyDefault {
            url: "https://example.test/hook".into(),
            secret: "a-notification-secret-of-32-bytes!".into(),
            enabled: true,
        });
        let text = format!(
            "{directory:?} {:?} {:?}",
            directory.clients[seed::MERCHANT_CLIENT_ID],
            directory.merchants[seed::MERCHANT_NO].notify_default
        );
        assert!(!text.contains(seed::MERCHANT_CLIENT_SECRET), "{text}");
        assert!(!text.contains("a-notification-secret"), "{text}");
        assert!(text.contains("[REDACTED]"));
    }
}
