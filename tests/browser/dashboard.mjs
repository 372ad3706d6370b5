// Drives headless Chromium (Debian's `chromium` package, never a downloaded build) through the
// sandbox's developer dashboard for tests/browser_dashboard.rs.
//
// Protocol: JSON lines. Reads one line on stdin:
//   {"dashboard_url", "order_no", "payment_no", "artifacts_dir"}
// opens the dashboard, follows the payment's link, picks the channel `payment_no`, clicks "Pay",
// waits (reloading) until the timeline shows `paid` and the `paid` notification attempt shows
// the receiver's answer, clicks "Refund" and waits the same way for `refunded`, takes
// screenshots (PNG) into artifacts_dir and answers:
//   {"event":"done","timeline":[{"version","status","why"}],
//    "attempts":[{"event_id","event_status","http_status","answer"}],
//    "flashes":[...],"screenshots":[...],"page_errors":[...]}
// Progress goes to stderr. Any failure exits non-zero with {"event":"error","message"}.

import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { CHROMIUM, emit, log, readRequest } from './protocol.mjs';

const STEP_TIMEOUT_MS = 15_000;

let browser;

async function main() {
  const input = await readRequest('dashboard');
  const { dashboard_url: dashboardUrl, order_no: orderNo, payment_no: paymentNo } = input;
  const artifacts = input.artifacts_dir;
  mkdirSync(artifacts, { recursive: true });

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  log('chromium', browser.version());
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  const screenshots = [];
  const flashes = [];
  const shoot = async (name) => {
    const path = join(artifacts, name);
    await page.screenshot({ path, fullPage: true });
    screenshots.push(path);
    log('screenshot', path);
  };

  /** Clicks a button whose script sends a control request and reloads the page. */
  const act = async (button) => {
    try {
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), button.click()]);
    } catch (e) {
      throw new Error(`no reload after the click; flash: ${await page.locator('#flash').innerText()}: ${e}`);
    }
    const flash = (await page.locator('#flash').innerText()).trim();
    flashes.push(flash);
    log('flash:', flash);
  };

  /** Reloads until `selector` is on the page (background delivery takes a moment). */
  const waitFor = async (selector, what) => {
    for (let i = 0; i < 60; i++) {
      if (await page.locator(selector).count()) return;
      await page.waitForTimeout(250);
      await page.reload({ waitUntil: 'load' });
    }
    throw new Error(`never saw ${what} (${selector})`);
  };

  // --- the overview lists the payment ------------------------------------------------------
  await page.goto(dashboardUrl, { waitUntil: 'load' });
  await page.locator(`#payments tr[data-order-no="${orderNo}"]`).waitFor();
  await shoot('01-overview.png');
  await Promise.all([
    page.waitForNavigation({ waitUntil: 'load' }),
    page.locator(`#payments a[href$="/payments/${orderNo}"]`).click(),
  ]);
  await page.locator(`#payment[data-order-no="${orderNo}"]`).waitFor();
  await waitFor('#attempts tr.attempt[data-event-status="pending"][data-http-status="200"]',
    'the pending notification acknowledged');
  await shoot('02-payment-pending.png');

  // --- pay -------------------------------------------------------------------------------------
  await page.locator('#buyer select[name="payment_no"]').selectOption(paymentNo);
  await act(page.locator('#buyer button[name="pay"]'));
  await waitFor('#timeline tr[data-version="2"][data-status="paid"]', 'paid in the timeline');
  await waitFor('#attempts tr.attempt[data-event-status="paid"][data-http-status="200"]',
    'the paid notification acknowledged');
  await shoot('03-paid.png');

  // --- refund ----------------------------------------------------------------------------------
  await act(page.locator('#actions button[name="refund"]'));
  await waitFor('#timeline tr[data-version="3"][data-status="refunded"]', 'refunded in the timeline');
  await waitFor('#attempts tr.attempt[data-event-status="refunded"][data-http-status="200"]',
    'the refunded notification acknowledged');
  await shoot('04-refunded.png');

  const timeline = await page.locator('#timeline tr.change').evaluateAll((rows) =>
    rows.map((r) => ({
      version: Number(r.dataset.version),
      status: r.dataset.status,
      why: r.cells[3].innerText.trim(),
    })));
  const attempts = await page.locator('#attempts tr.attempt').evaluateAll((rows) =>
    rows.map((r) => ({
      event_id: r.dataset.eventId,
      event_status: r.dataset.eventStatus,
      http_status: r.dataset.httpStatus,
      answer: r.querySelector('.answer').innerText.trim(),
    })));
  emit({
    event: 'done',
    timeline,
    attempts,
    flashes,
    screenshots,
    page_errors: pageErrors,
    page_text: await page.locator('body').innerText(),
  });
}

try {
  await main();
} catch (e) {
  emit({ event: 'error', message: String(e?.stack ?? e) });
  process.exitCode = 1;
} finally {
  await browser?.close().catch(() => {});
}
