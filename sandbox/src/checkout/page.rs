//! Markup of the checkout page. It shows only what the contract allows: the merchant name,
//! the description, the amount, a countdown and the methods (by per-order method identifier).
//! The external reference, the order number, the payment event number, the channel
//! transaction number and the settlement never appear on it.

use time::OffsetDateTime;

use crate::directory::store::DirectoryStore;
use crate::merchant_payments::store::{MerchantPayment, Status};
use crate::merchant_payments::views::rfc3339;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `amount_minor` as a decimal text with `decimals` places, by integer arithmetic.
pub fn format_amount(amount_minor: i64, decimals: u32) -> String {
    let digits = amount_minor.unsigned_abs().to_string();
    let sign = if amount_minor < 0 { "-" } else { "" };
    let decimals = decimals as usize;
    if decimals == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = decimals + 1);
    let (whole, fraction) = padded.split_at(padded.len() - decimals);
    format!("{sign}{whole}.{fraction}")
}

/// Seconds between automatic re-reads while a result is undecided.
const UNDECIDED_REFRESH_SECONDS: u32 = 5;

fn layout(title: &str, body: &str) -> String {
    page(title, body, false)
}

/// The page around `body`; with `refresh`, the browser re-reads it every few seconds (the
/// checkout keeps querying while an asynchronous payment is undecided).
fn page(title: &str, body: &str, refresh: bool) -> String {
    let refresh = if refresh {
        format!("<meta http-equiv=\"refresh\" content=\"{UNDECIDED_REFRESH_SECONDS}\">")
    } else {
        String::new()
    };
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}}\
         .amount{{font-size:1.6rem;font-weight:600}}.notice{{background:#fff4d6;padding:.6rem}}\
         fieldset{{margin:1rem 0}}button{{margin:.3rem 0}}</style></head><body>\n{body}\n</body></html>\n",
        title = escape(title),
    )
}

/// A page with a single message.
pub fn message_page(title: &str, message: &str) -> String {
    layout(
        title,
        &format!("<p class=\"notice\">{}</p>", escape(message)),
    )
}

/// The checkout page of a payment for the buyer currently logged in on it (if any).
pub fn checkout_page(
    directory: &DirectoryStore,
    payment: &MerchantPayment,
    token: &str,
    now: OffsetDateTime,
    notice: Option<&str>,
) -> String {
    let merchant = directory
        .merchants
        .get(&payment.merchant_no)
        .map(|m| m.name.clone())
        .unwrap_or_default();
    let base = format!("{}/{}", crate::checkout::CHECKOUT_PATH, escape(token));
    let mut body = format!("<h1>Pay {}</h1>\n", escape(&merchant));
    if let Some(description) = &payment.description {
        body.push_str(&format!(
            "<p class=\"description\">{}</p>\n",
            escape(description)
        ));
    }
    body.push_str(&format!(
        "<p class=\"amount\">{} {}</p>\n",
        escape(&format_amount(
            payment.amount_minor,
            payment.currency_decimals
        )),
        escape(&payment.currency)
    ));
    if let Some(notice) = notice {
        body.push_str(&format!(
            "<p class=\"notice\" role=\"alert\">{}</p>\n",
            escape(notice)
        ));
    }
    match payment.status {
        Status::Pending => {}
        Status::Paid => {
            body.push_str("<p class=\"state\">Payment complete. Thank you.</p>\n");
            return layout("Checkout", &body);
        }
        Status::Expired => {
            body.push_str("<p class=\"state\">This payment has expired.</p>\n");
            return layout("Checkout", &body);
        }
        Status::Review => {
            body.push_str(
                "<p class=\"state\">The payment result is being verified. Do not pay again.</p>\n\
                 <p><a href=\"\">Check again</a></p>\n",
            );
            return page("Checkout", &body, true);
        }
        Status::Refunded | Status::Chargeback => {
            body.push_str("<p class=\"state\">This payment is closed.</p>\n");
            return layout("Checkout", &body);
        }
    }
    let remaining = (payment.expires_at - now).whole_seconds().max(0);
    body.push_str(&format!(
        "<p class=\"countdown\">Time left: <span id=\"countdown\" data-seconds=\"{remaining}\">{}:{:02}</span> \
         (until <time datetime=\"{at}\">{at}</time>)</p>\n\
         <script>(function(){{var e=document.getElementById('countdown');var s=+e.dataset.seconds;\
         setInterval(function(){{if(s>0)s--;e.textContent=Math.floor(s/60)+':'+('0'+s%60).slice(-2);}},1000);}})();</script>\n",
        remaining / 60,
        remaining % 60,
        at = rfc3339(payment.expires_at),
    ));

    let user = payment.checkout_user.as_deref();
    match user {
        Some(u) => body.push_str(&format!(
            "<form method=\"post\" action=\"{base}/logout\"><p>Logged in as <b>{}</b> \
             <button type=\"submit\">Log out</button></p></form>\n",
            escape(u)
        )),
        None => {
            let options: String = directory
                .users
                .keys()
                .map(|u| format!("<option value=\"{0}\">{0}</option>", escape(u)))
                .collect();
            body.push_str(&format!(
                "<form method=\"post\" action=\"{base}/login\"><fieldset><legend>Log in (sandbox buyer)</legend>\
                 <select name=\"user\">{options}</select> <button type=\"submit\">Log in</button></fieldset></form>\n"
            ));
        }
    }

    let mut refresh = false;
    if let Some(session) = &payment.session {
        let name = directory
            .channels
            .get(&session.payment_no)
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let card = directory
            .channels
            .get(&session.payment_no)
            .is_some_and(|c| c.provider == "card-provider");
        body.push_str(&format!(
            "<p class=\"locked\">Payment started with <b>{}</b>.</p>\n",
            escape(&name)
        ));
        if session.unclear {
            refresh = true;
            body.push_str(
                "<p class=\"state\">The payment result is not clear yet; it is being checked. \
                 Do not pay again.</p><p><a href=\"\">Check again</a></p>\n",
            );
        } else if card {
            body.push_str(&format!(
                "<fieldset><legend>Sandbox card provider</legend>\
                 <form method=\"post\" action=\"{base}/card/complete\"><button type=\"submit\">Complete card payment</button></form>\
                 <form method=\"post\" action=\"{base}/card/cancel\"><button type=\"submit\">Cancel at card provider</button></form>\
                 </fieldset>\n"
            ));
        } else {
            body.push_str(&format!(
                "<form method=\"post\" action=\"{base}/pay\"><button type=\"submit\">Continue payment</button></form>\n"
            ));
        }
    } else {
        let merchant_record = directory.merchants.get(&payment.merchant_no);
        let mut options = String::new();
        let mut checked_one = false;
        for method in &payment.methods {
            let Some(channel) = directory.channels.get(&method.payment_no) else {
                continue;
            };
            if !channel.payable_by(user) && user.is_some() {
                continue;
            }
            let login = merchant_record.is_some_and(|m| channel.login_required(m));
            // Preselect the first method this buyer can pay with right now.
            let usable_now = (user.is_some() || !login) && channel.payable_by(user);
            let checked = if usable_now && !checked_one {
                checked_one = true;
                " checked"
            } else {
                ""
            };
            options.push_str(&format!(
                "<p><label><input type=\"radio\" name=\"method\" value=\"{}\"{checked}> {}{}</label></p>",
                escape(&method.method_id),
                escape(&channel.name),
                if login && user.is_none() { " (log in required)" } else { "" },
            ));
        }
        body.push_str(&format!(
            "<form method=\"post\" action=\"{base}/pay\"><fieldset><legend>Payment method</legend>{options}</fieldset>\
             <button type=\"submit\">Pay</button></form>\n"
        ));
    }
    body.push_str(&format!(
        "<form method=\"post\" action=\"{base}/cancel\"><button type=\"submit\">Cancel</button></form>\n"
    ));
    page("Checkout", &body, refresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Amounts are shown from minor units by integer arithmetic at the currency's precision.
    #[test]
    fn amount_is_formatted_from_minor_units() {
        assert_eq!(format_amount(1250, 2), "12.50");
        assert_eq!(format_amount(5, 2), "0.05");
        assert_eq!(format_amount(1200, 0), "1200");
        assert_eq!(format_amount(1, 8), "0.00000001");
    }
}
