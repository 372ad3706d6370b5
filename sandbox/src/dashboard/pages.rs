//! HTML of the dashboard pages, from the read-only views of [`super::view`] only. No inline
//! style or script (the CSP allows neither): the style sheet and the script (buttons
//! POST/PUT/DELETE JSON to the control endpoints with the dashboard token, then the page
//! reloads) are served by the sandbox itself. Every text taken from state is escaped.

use std::fmt::Write;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::view::{DashboardView, event_status, fault_effect};
use crate::inspect::{DeliveryStatus, LoggedAttempt, PaymentView};
use crate::seed::CONTROL_PREFIX;

/// Escapes text for HTML content and attribute values (the checkout page's escaping).
pub use crate::checkout::page::escape as esc;

fn stamp(at: OffsetDateTime) -> String {
    at.replace_nanosecond(0)
        .unwrap_or(at)
        .format(&Rfc3339)
        .unwrap_or_default()
}

fn opt_time(at: Option<OffsetDateTime>) -> String {
    at.map(stamp).unwrap_or_else(|| "–".to_owned())
}

/// "in 4m 10s" / "3s ago" relative to `now`.
fn relative(at: OffsetDateTime, now: OffsetDateTime) -> String {
    let seconds = (at - now).whole_seconds();
    let span = |s: i64| {
        let s = s.abs();
        match s {
            0..60 => format!("{s}s"),
            60..3600 => format!("{}m {}s", s / 60, s % 60),
            _ => format!("{}h {}m", s / 3600, s % 3600 / 60),
        }
    };
    if seconds >= 0 {
        format!("in {}", span(seconds))
    } else {
        format!("{} ago", span(seconds))
    }
}

/// A fixed-point amount with `decimals` digits after the point.
fn fixed(amount: i64, decimals: u32) -> String {
    let scale = 10i128.pow(decimals);
    let value = i128::from(amount);
    let sign = if value < 0 { "-" } else { "" };
    let value = value.abs();
    if decimals == 0 {
        return format!("{sign}{value}");
    }
    format!(
        "{sign}{}.{:0width$}",
        value / scale,
        value % scale,
        width = decimals as usize
    )
}

fn control(path: &str) -> String {
    format!("{CONTROL_PREFIX}{path}")
}

/// The hidden field carrying the dashboard token that every form sends (form rule of
/// [`crate::guard`]; the script sends it as `X-Sandbox-Token`).
fn token_field(view: &DashboardView) -> String {
    format!(
        r#"<input type="hidden" name="{}" value="{}">"#,
        crate::guard::form_token::FIELD,
        esc(&view.form_token)
    )
}

/// A form whose buttons send JSON to a control endpoint (see the page script).
fn action_form(view: &DashboardView, url: &str, method: &str, body: &str, inner: &str) -> String {
    format!(
        r#"<form class="act" data-url="{}" data-method="{method}" data-body="{}">{}{inner}</form>"#,
        esc(url),
        esc(body),
        token_field(view)
    )
}

fn button(label: &str, name: &str) -> String {
    format!(
        r#"<button type="submit" name="{name}">{}</button>"#,
        esc(label)
    )
}

/// A button of a shared form that carries its own JSON body.
fn body_button(label: &str, name: &str, body: &str) -> String {
    format!(
        r#"<button type="submit" name="{name}" data-body="{}">{}</button>"#,
        esc(body),
        esc(label)
    )
}

/// The pages' style sheet, served at `/_sandbox/dashboard.css` (the CSP allows no inline style).
pub const STYLE: &str = include_str!("dashboard.css");

/// The pages' script, served at `/_sandbox/dashboard.js` (the CSP allows no inline script).
pub const SCRIPT: &str = include_str!("dashboard.js");

fn page(title: &str, view: &DashboardView, content: &str) -> String {
    let worker = if view.worker_paused {
        action_form(
            view,
            &control("/notifications/worker"),
            "PUT",
            r#"{"enabled":true}"#,
            &format!(
                r#"<span class="st st-failed">delivery worker paused</span>{}"#,
                button("Resume worker", "resume-worker")
            ),
        )
    } else {
        action_form(
            view,
            &control("/notifications/worker"),
            "PUT",
            r#"{"enabled":false}"#,
            &format!(
                r#"<span class="st st-paid">delivery worker running</span>{}"#,
                button("Pause worker", "pause-worker")
            ),
        )
    };
    let sweep_toggle = if view.sweep_paused {
        body_button("Resume sweep", "resume-sweep", r#"{"enabled":true}"#)
    } else {
        body_button("Pause sweep", "pause-sweep", r#"{"enabled":false}"#)
    };
    let sweep = format!(
        r#"<form class="act" data-url="{url}" data-method="POST">{token}<span class="st {class}">sweep {state}</span><button type="submit" name="run-sweep">Run sweep now</button>{toggle}</form>"#,
        url = esc(&control("/sweep")),
        token = token_field(view),
        class = if view.sweep_paused {
            "st-failed"
        } else {
            "st-paid"
        },
        state = if view.sweep_paused {
            "paused"
        } else {
            "every clock minute"
        },
        toggle = sweep_toggle.replace("<button ", r#"<button data-method="PUT" "#),
    );
    let advance = action_form(
        view,
        &control("/clock/advance"),
        "POST",
        "{}",
        &format!(
            r#"<input type="number" name="seconds" value="60" min="0" aria-label="seconds">{}"#,
            button("Advance clock (s)", "advance-clock")
        ),
    );
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{title}</title><link rel="stylesheet" href="{home}/dashboard.css"></head>
<body><header><h1><a href="{home}/">Sandbox dashboard</a></h1>
<div id="clock">Sandbox clock <code>{now}</code> <span class="muted">(real time {offset:+} s)</span></div></header>
<main><div id="flash" role="status"></div>
<noscript><p>The buttons need JavaScript (they send JSON to the control endpoints).</p></noscript>
<section id="controls"><h2>Sandbox</h2>{advance} {worker} {sweep}</section>
{content}
</main><script src="{home}/dashboard.js"></script></body></html>
"#,
        title = esc(title),
        home = CONTROL_PREFIX,
        now = stamp(view.now),
        offset = view.clock_offset_seconds,
    )
}

fn status(name: &str) -> String {
    format!(r#"<span class="st st-{0}">{0}</span>"#, esc(name))
}

fn payment_link(order_no: &str) -> String {
    format!(
        r#"<a href="{CONTROL_PREFIX}/payments/{0}">{0}</a>"#,
        esc(order_no)
    )
}

fn amount(p: &PaymentView) -> String {
    format!(
        "{} {}",
        fixed(p.amount_minor, p.currency_decimals),
        esc(&p.currency)
    )
}

/// `GET /_sandbox/`: every payment, the latest attempts, catalog orders and trades, faults,
/// rate limits and wallets.
pub fn overview(view: &DashboardView) -> String {
    let mut html = String::new();
    let now = view.now;

    html.push_str(r#"<section id="payments"><h2>Merchant payments</h2>"#);
    if view.payments.is_empty() {
        html.push_str(r#"<p class="muted">None yet.</p>"#);
    } else {
        html.push_str("<table><tr><th>order_no</th><th>merchant</th><th>reference</th><th>amount</th><th>status</th><th>version</th><th>channel</th><th>expires_at</th><th>notifications</th></tr>");
        for p in &view.payments {
            let records = view.records_of(&p.order_no);
            let (delivered, records) = records.fold((0, 0), |(delivered, all), r| {
                let done = usize::from(r.status == DeliveryStatus::Delivered);
                (delivered + done, all + 1)
            });
            let _ = write!(
                html,
                r#"<tr class="payment" data-order-no="{order}" data-status="{st}"><td>{link}</td><td>{merchant}</td><td>{reference}</td><td>{amount}</td><td>{status}</td><td>{version}</td><td>{channel}</td><td>{expires} <span class="muted">{rel}</span></td><td>{records}</td></tr>"#,
                order = esc(&p.order_no),
                st = p.status.as_str(),
                link = payment_link(&p.order_no),
                merchant = esc(&p.merchant_no),
                reference = esc(&p.external_reference),
                amount = amount(p),
                status = status(p.status.as_str()),
                version = p.status_version,
                channel = esc(p.session.as_ref().map_or("–", |s| s.payment_no.as_str())),
                expires = stamp(p.expires_at),
                rel = relative(p.expires_at, now),
                records = if p.notify_url.is_some() {
                    format!("{delivered}/{records} delivered")
                } else {
                    "off".to_owned()
                },
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</section>");

    let _ = write!(
        html,
        r#"<section id="attempts"><h2>Notification attempts <span class="muted">(latest {}, newest first)</span></h2>"#,
        super::view::ATTEMPTS_SHOWN
    );
    attempts_table(&mut html, &view.attempts, true);
    html.push_str("</section>");

    catalog(&mut html, view);
    faults_and_limits(&mut html, view);
    page("Sandbox dashboard", view, &html)
}

fn catalog(html: &mut String, view: &DashboardView) {
    html.push_str(r#"<section id="catalog-orders"><h2>Catalog orders</h2>"#);
    if view.catalog_orders.is_empty() {
        html.push_str(r#"<p class="muted">None yet.</p>"#);
    } else {
        html.push_str("<table><tr><th>order_no</th><th>merchant</th><th>buyer</th><th>product</th><th>qty</th><th>status</th><th>pay amount</th><th>channel</th><th>trade_no</th><th>created</th><th>paid</th></tr>");
        for o in &view.catalog_orders {
            let label = match o.status {
                0 => "0 awaiting payment",
                1 => "1 paid",
                2 => "2 cancelled",
                _ => "3 completed",
            };
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&o.order_no),
                esc(&o.merchant_no),
                esc(&o.user_id),
                esc(&o.gd_no),
                esc(&o.title),
                o.quantity,
                label,
                fixed(o.payment_pay_amount, 8),
                esc(&o.payment_currency),
                esc(&o.payment_no),
                esc(o.trade.as_ref().map_or("–", |t| t.trade_no.as_str())),
                stamp(o.created_at),
                opt_time(o.paid_at),
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</section>");

    html.push_str(r#"<section id="trades"><h2>Catalog payment sessions (trades)</h2>"#);
    if view.trades.is_empty() {
        html.push_str(r#"<p class="muted">None yet.</p>"#);
    } else {
        html.push_str("<table><tr><th>trade_no</th><th>order_no</th><th>payment status</th><th>expires</th><th></th></tr>");
        for t in &view.trades {
            let payment_status = view.catalog_payment_status(&t.order_no);
            let label = match payment_status {
                0 => "0 awaiting",
                1 => "1 paid",
                _ => "2 cancelled",
            };
            let buttons = if payment_status == 0 {
                let base = control(&format!("/catalog/trades/{}", t.trade_no));
                format!(
                    "{}{}",
                    action_form(
                        view,
                        &format!("{base}/pay"),
                        "POST",
                        "{}",
                        &button("Pay (card)", "trade-pay")
                    ),
                    action_form(
                        view,
                        &format!("{base}/cancel"),
                        "POST",
                        "{}",
                        &button("Cancel", "trade-cancel")
                    ),
                )
            } else {
                String::new()
            };
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&t.trade_no),
                esc(&t.order_no),
                label,
                stamp(t.expires_at),
                buttons
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</section>");
}

fn faults_and_limits(html: &mut String, view: &DashboardView) {
    html.push_str(r#"<section id="faults"><h2>Pending faults</h2>"#);
    if view.faults.is_empty() {
        html.push_str(r#"<p class="muted">None.</p>"#);
    } else {
        html.push_str("<table><tr><th>id</th><th>method</th><th>path</th><th>effect</th><th>times left</th><th></th></tr>");
        for f in &view.faults {
            let remove = action_form(
                view,
                &control(&format!("/faults/{}", f.id)),
                "DELETE",
                "{}",
                &button("Remove", "fault-remove"),
            );
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{remove}</td></tr>",
                f.id,
                esc(&f.method),
                esc(&f.path),
                esc(&fault_effect(f)),
                f.remaining
            );
        }
        html.push_str("</table>");
        html.push_str(&action_form(
            view,
            &control("/faults"),
            "DELETE",
            "{}",
            &button("Clear all faults", "faults-clear"),
        ));
    }
    html.push_str("</section>");

    let _ = write!(
        html,
        r#"<section id="limits"><h2>Rate-limit windows <span class="muted">({} s windows)</span></h2>"#,
        view.limit_window_seconds
    );
    if view.limits.is_empty() {
        html.push_str(r#"<p class="muted">No requests counted.</p>"#);
    } else {
        html.push_str("<table><tr><th>budget</th><th>client or IP</th><th>used</th><th>oldest leaves</th></tr>");
        for l in &view.limits {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{} / {}</td><td>{} <span class=\"muted\">{}</span></td></tr>",
                esc(l.bucket.name()),
                esc(&l.key),
                l.used,
                l.limit,
                stamp(l.frees_at.unwrap_or(view.now)),
                relative(l.frees_at.unwrap_or(view.now), view.now),
            );
        }
        html.push_str("</table>");
        html.push_str(&action_form(
            view,
            &control("/limits"),
            "DELETE",
            "{}",
            &button("Reset every window", "limits-reset"),
        ));
    }
    html.push_str("</section>");

    html.push_str(r#"<section id="buyers"><h2>Buyers</h2><table><tr><th>user</th><th>platform-coin wallet</th></tr>"#);
    for (user_id, wallet) in &view.wallets {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td></tr>",
            esc(user_id),
            fixed(*wallet, 8)
        );
    }
    html.push_str("</table></section>");
}

fn attempts_table(html: &mut String, attempts: &[LoggedAttempt], with_order: bool) {
    if attempts.is_empty() {
        html.push_str(r#"<p class="muted">None yet.</p>"#);
        return;
    }
    html.push_str("<table><tr><th>started</th>");
    if with_order {
        html.push_str("<th>order_no</th>");
    }
    html.push_str(
        "<th>event</th><th>attempt</th><th>answer</th><th>error</th><th>request</th></tr>",
    );
    for a in attempts {
        let answer = a
            .http_status
            .map_or_else(|| "no answer".to_owned(), |s| format!("HTTP {s}"));
        let (event_status, event_version) = event_status(a);
        let _ = write!(
            html,
            r#"<tr class="attempt" data-event-id="{event}" data-event-status="{est}" data-http-status="{hs}"><td>{started}<br><span class="muted">{took} ms</span></td>"#,
            event = esc(&a.event_id),
            est = esc(&event_status),
            hs = a.http_status.map(|s| s.to_string()).unwrap_or_default(),
            started = stamp(a.started_at),
            took = (a.finished_at - a.started_at).whole_milliseconds(),
        );
        if with_order {
            let _ = write!(html, "<td>{}</td>", payment_link(&a.order_no));
        }
        let _ = write!(
            html,
            r#"<td><code>{event}</code><br>{status} v{version}</td><td>{number}</td><td class="answer">{answer}</td><td>{error}</td><td><details{open}><summary>POST <code>{url}</code></summary><pre>X-Service-Event-ID: {event}
X-Service-Timestamp: {timestamp}
X-Service-Signature: {signature}</pre><div class="muted">body (raw, as signed)</div><pre>{body}</pre></details></td></tr>"#,
            event = esc(&a.event_id),
            status = status(&event_status),
            version = event_version.map(|v| v.to_string()).unwrap_or_default(),
            number = a.number,
            error = esc(a.error.as_deref().unwrap_or("")),
            url = esc(&a.url),
            timestamp = a.timestamp,
            signature = esc(&a.signature),
            body = esc(&a.body),
            open = if with_order { "" } else { " open" },
        );
    }
    html.push_str("</table>");
}

/// `GET /_sandbox/payments/{order_no}`: one payment, its timeline, notification records and
/// attempts, and the buttons that act on it.
pub fn payment(view: &DashboardView, p: &PaymentView) -> String {
    let mut html = String::new();
    let now = view.now;
    let base = control(&format!("/merchant-payments/{}", p.order_no));
    let _ = write!(
        html,
        r#"<section id="payment" data-order-no="{order}" data-status="{st}"><h2>Payment <code>{order}</code> {status}</h2><dl>
<dt>merchant</dt><dd>{merchant}</dd><dt>reference</dt><dd>{reference}</dd><dt>amount</dt><dd>{amount}</dd>
<dt>description</dt><dd>{description}</dd><dt>status_version</dt><dd>{version}</dd>
<dt>created</dt><dd>{created}</dd><dt>expires_at</dt><dd>{expires} <span class="muted">{rel}</span></dd>
<dt>offered channels</dt><dd>{methods}</dd><dt>channel session</dt><dd>{session}</dd>
<dt>event_id</dt><dd>{event}</dd><dt>provider_trade_no</dt><dd>{trade}</dd><dt>occurred_at</dt><dd>{occurred}</dd>
<dt>notifications</dt><dd>{notify}</dd></dl>
<p class="muted">The checkout address is not shown: it holds the checkout token.</p></section>"#,
        order = esc(&p.order_no),
        st = p.status.as_str(),
        status = status(p.status.as_str()),
        merchant = esc(&p.merchant_no),
        reference = esc(&p.external_reference),
        amount = amount(p),
        description = esc(p.description.as_deref().unwrap_or("–")),
        version = p.status_version,
        created = stamp(p.created_at),
        expires = stamp(p.expires_at),
        rel = relative(p.expires_at, now),
        methods = p
            .methods
            .iter()
            .map(|m| format!(
                "{} <span class=\"muted\">({}, {})</span>",
                esc(&m.name),
                esc(&m.payment_no),
                esc(&m.provider)
            ))
            .collect::<Vec<_>>()
            .join(", "),
        session = p.session.as_ref().map_or_else(
            || "none started".to_owned(),
            |s| format!(
                "{} started {}{}{}{}",
                esc(&s.payment_no),
                stamp(s.started_at),
                s.user
                    .as_ref()
                    .map(|u| format!(" by {}", esc(u)))
                    .unwrap_or_default(),
                if s.unclear {
                    ", channel answer unclear"
                } else {
                    ""
                },
                if s.channel_expired {
                    ", channel confirmed it expired unpaid"
                } else {
                    ""
                },
            )
        ),
        event = esc(p.event_id.as_deref().unwrap_or("–")),
        trade = esc(p.provider_trade_no.as_deref().unwrap_or("–")),
        occurred = opt_time(p.occurred_at),
        notify = p.notify_url.as_ref().map_or_else(
            || "off".to_owned(),
            |u| format!("to <code>{}</code>", esc(u))
        ),
    );

    // What the real service (a buyer, a channel, platform staff, time) does on its own.
    let channels: String = match &p.session {
        Some(s) => format!(
            r#"<option value="{0}">{0} (open session)</option>"#,
            esc(&s.payment_no)
        ),
        None => p
            .methods
            .iter()
            .map(|m| {
                format!(
                    r#"<option value="{}">{}</option>"#,
                    esc(&m.payment_no),
                    esc(&m.name)
                )
            })
            .collect(),
    };
    let users: String = view
        .wallets
        .iter()
        .map(|(user_id, wallet)| {
            format!(
                r#"<option value="{0}">{0} (wallet {1})</option>"#,
                esc(user_id),
                fixed(*wallet, 8)
            )
        })
        .collect();
    html.push_str(r#"<section id="actions"><h2>Act as the service</h2>"#);
    let _ = write!(
        html,
        r#"<form class="act" id="buyer" data-url="{pay}" data-method="POST" data-body="{{}}">{token}<label>Channel <select name="payment_no">{channels}</select></label>
<label>Buyer <select name="user"><option value="">anonymous</option>{users}</select></label>
<button type="submit" name="pay">Pay</button><button type="submit" name="session" data-url="{session}">Start checkout session</button></form>"#,
        token = token_field(view),
        pay = esc(&format!("{base}/checkout/pay")),
        session = esc(&format!("{base}/checkout/session")),
    );
    html.push_str("<div>");
    html.push_str(&action_form(
        view,
        &format!("{base}/checkout/unclear"),
        "POST",
        "{}",
        &button("Channel answer unclear", "unclear"),
    ));
    html.push_str(&action_form(
        view,
        &format!("{base}/force"),
        "POST",
        "{}",
        &[
            ("Force review", "force-review", "review"),
            ("Force paid", "force-paid", "paid"),
            ("Refund", "refund", "refunded"),
            ("Chargeback", "chargeback", "chargeback"),
        ]
        .iter()
        .map(|(label, name, to)| body_button(label, name, &format!(r#"{{"status":"{to}"}}"#)))
        .collect::<String>(),
    ));
    html.push_str(&action_form(
        view,
        &format!("{base}/expire"),
        "POST",
        "{}",
        &button("Expire (advance the clock to expires_at)", "expire"),
    ));
    html.push_str("</div></section>");

    html.push_str(r#"<section id="timeline"><h2>Status timeline</h2><table><tr><th>status_version</th><th>status</th><th>when (sandbox clock)</th><th>why</th></tr>"#);
    for t in &p.timeline {
        let _ = write!(
            html,
            r#"<tr class="change" data-version="{v}" data-status="{st}"><td>{v}</td><td>{status}</td><td>{at}</td><td>{why}</td></tr>"#,
            v = t.status_version,
            st = t.status.as_str(),
            status = status(t.status.as_str()),
            at = stamp(t.at),
            why = esc(&t.why),
        );
    }
    html.push_str("</table></section>");

    html.push_str(r#"<section id="records"><h2>Notification records</h2>"#);
    if p.notify_url.is_none() {
        html.push_str(r#"<p class="muted">Notifications are off for this payment.</p>"#);
    } else if view.records_of(&p.order_no).next().is_none() {
        html.push_str(r#"<p class="muted">None yet.</p>"#);
    } else {
        html.push_str("<table><tr><th>event</th><th>version</th><th>delivery</th><th>attempts</th><th>next attempt</th><th>last answer</th><th>last error</th><th></th></tr>");
        for r in view.records_of(&p.order_no) {
            let label = if r.status == DeliveryStatus::Failed {
                "Re-queue now"
            } else {
                "Redeliver now"
            };
            let redeliver = action_form(
                view,
                &format!("{base}/notifications/{}/redeliver", r.event_id),
                "POST",
                "{}",
                &button(label, "redeliver"),
            );
            let _ = write!(
                html,
                r#"<tr class="record" data-event-id="{event}" data-delivery-status="{ds}"><td><code>{event}</code></td><td>{v}</td><td>{status}{flight}</td><td>{attempts}</td><td>{next}</td><td>{answer}</td><td>{error}</td><td>{redeliver}</td></tr>"#,
                event = esc(&r.event_id),
                ds = r.status.as_str(),
                v = r.status_version,
                status = status(r.status.as_str()),
                flight = if r.in_flight { " (in flight)" } else { "" },
                attempts = r.attempts,
                next = opt_time(r.next_attempt_at),
                answer = r
                    .last_http_status
                    .map(|s| format!("HTTP {s}"))
                    .unwrap_or_else(|| "–".to_owned()),
                error = esc(r.last_error.as_deref().unwrap_or("")),
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</section>");

    html.push_str(r#"<section id="attempts"><h2>Delivery attempts <span class="muted">(newest first)</span></h2>"#);
    attempts_table(&mut html, &view.attempts, false);
    html.push_str("</section>");
    page(&format!("Payment {}", p.order_no), view, &html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_formats() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(fixed(1250, 2), "12.50");
        assert_eq!(fixed(-5, 2), "-0.05");
        assert_eq!(fixed(100_000_000, 8), "1.00000000");
        assert_eq!(fixed(7, 0), "7");
        let now = OffsetDateTime::UNIX_EPOCH;
        assert_eq!(
            relative(now + time::Duration::seconds(90), now),
            "in 1m 30s"
        );
        assert_eq!(relative(now - time::Duration::seconds(5), now), "5s ago");
    }
}
