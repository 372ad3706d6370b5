// Drives headless Chromium (Debian's `chromium` package, never a downloaded build) through the
// sandbox's hosted checkout for tests/browser_checkout.rs.
//
// Protocol: JSON lines. On stdout this script first announces the merchant return page it
// serves (HTTPS on 127.0.0.1, a throw-away self-signed certificate made with `openssl`):
//   {"event":"return_page","return_url":"https://127.0.0.1:PORT/shop/orders/.../return?...#..."}
// then reads one line on stdin:
//   {"checkout_url", "ca_pem", "user", "method_label", "artifacts_dir"}
// opens checkout_url, logs in as `user` when the page offers a login, picks the method whose
// label contains `method_label`, pays, waits for the browser to land on the return page, takes
// screenshots (PNG) into artifacts_dir and answers:
//   {"event":"done","final_url","title","page_text","return_hits":[{"url","referer"}],
//    "screenshots":[...],"checkout_steps":[...]}
// Progress goes to stderr. Any failure exits non-zero with {"event":"error","message"}.
//
// Certificates: Chromium is told to accept exactly two keys (--ignore-certificate-errors-spki-list):
// the sandbox's server key, checked here against the sandbox CA first, and the return page's key.

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

import { CHROMIUM, emit, log, readRequest } from './protocol.mjs';

const STEP_TIMEOUT_MS = 30_000;

/** base64 SHA-256 of a certificate's SubjectPublicKeyInfo (Chromium's SPKI hash form). */
function spkiHash(certDerOrPem) {
  const spki = new X509Certificate(certDerOrPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** The certificate the server at `origin` presents, verified against `caPem`. */
function serverCertificate(origin, caPem) {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: url.hostname, port: Number(url.port), ca: caPem, servername: undefined },
      () => {
        const cert = socket.getPeerCertificate(false);
        socket.end();
        resolve(cert.raw);
      },
    );
    socket.on('error', reject);
  });
}

const hits = [];
const work = mkdtempSync(join(tmpdir(), 'storefront-browser-'));
let context;
let server;

async function main() {
  // --- the merchant's return page ------------------------------------------------------
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', join(work, 'key.pem'), '-out', join(work, 'cert.pem'),
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  const cert = readFileSync(join(work, 'cert.pem'));
  server = https.createServer({ key: readFileSync(join(work, 'key.pem')), cert }, (req, res) => {
    hits.push({ url: req.url, referer: req.headers.referer ?? null });
    if (req.url === '/favicon.ico') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><title>Merchant: order returned</title>
<style>body{font-family:sans-serif;margin:3em;color:#123}h1{color:#176b2c}code{background:#eee;padding:2px 4px}</style>
</head><body><h1>Thank you for your order</h1>
<p>You are back at the merchant. This page checks the payment with its own backend before it
updates the order (the return itself proves nothing).</p>
<p>Return address: <code id="where"></code></p>
<script>document.getElementById('where').textContent = location.href;</script>
</body></html>`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const returnUrl = `https://127.0.0.1:${port}/shop/orders/browser-1/return?step=paid#receipt`;
  emit({ event: 'return_page', return_url: returnUrl });

  // --- the payment to check out --------------------------------------------------------
  const input = await readRequest('checkout');
  const { checkout_url: checkoutUrl, ca_pem: caPem, user, method_label: methodLabel } = input;
  const artifacts = input.artifacts_dir;
  mkdirSync(artifacts, { recursive: true });

  const sandboxCert = await serverCertificate(new URL(checkoutUrl).origin, caPem);
  const trusted = [spkiHash(sandboxCert), spkiHash(cert)];
  log('accepting only these server keys:', trusted.join(', '));

  context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 900, height: 700 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--ignore-certificate-errors-spki-list=${trusted.join(',')}`,
    ],
  });
  log('chromium', context.browser()?.version() ?? '(persistent context)');
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const steps = [];
  const screenshots = [];
  const shoot = async (name) => {
    const path = join(artifacts, name);
    await page.screenshot({ path, fullPage: true });
    screenshots.push(path);
    log('screenshot', path);
  };

  // --- the buyer's way through the checkout --------------------------------------------
  const opened = await page.goto(checkoutUrl, { waitUntil: 'load' });
  steps.push({ step: 'open', status: opened?.status() ?? null, title: await page.title() });
  await shoot('01-checkout.png');

  const login = page.locator('form[action$="/login"]');
  if (await login.count()) {
    await login.locator('select[name="user"]').selectOption(user);
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'load' }),
      login.locator('button[type="submit"]').click(),
    ]);
    const loggedIn = await page.locator('form[action$="/logout"]').innerText();
    steps.push({ step: 'login', text: loggedIn.trim() });
    log('logged in:', loggedIn.trim());
    await shoot('02-logged-in.png');
  } else {
    steps.push({ step: 'login', text: 'no login form' });
  }

  const payForm = page.locator('form[action$="/pay"]');
  const method = payForm.locator('label', { hasText: methodLabel }).locator('input[name="method"]');
  if ((await method.count()) !== 1) {
    throw new Error(`no single method labelled ${JSON.stringify(methodLabel)}: ${await payForm.innerText()}`);
  }
  await method.check();
  steps.push({ step: 'method', value: await method.inputValue() });
  await Promise.all([
    page.waitForURL(returnUrl, { waitUntil: 'load' }),
    payForm.locator('button[type="submit"]').click(),
  ]);
  await page.locator('#where').filter({ hasText: 'https://' }).waitFor();
  steps.push({ step: 'returned', url: page.url() });
  await shoot('03-return-page.png');

  emit({
    event: 'done',
    final_url: page.url(),
    title: await page.title(),
    page_text: await page.locator('body').innerText(),
    return_hits: hits,
    screenshots,
    checkout_steps: steps,
  });
}

try {
  await main();
} catch (e) {
  emit({ event: 'error', message: String(e?.stack ?? e), return_hits: hits });
  process.exitCode = 1;
} finally {
  await context?.close().catch(() => {});
  server?.close();
  rmSync(work, { recursive: true, force: true });
}
