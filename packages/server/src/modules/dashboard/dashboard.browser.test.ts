import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestService } from '../../test/service.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { configureRelyingParty, ORIGIN, passkeyClient, registerPasskey } from '../passkeys/passkeys.testing.js';
import { timeStep, totpCode } from '../mfa/totp.js';
import { DASHBOARD_DIST_DIR } from './dashboard.static.js';

/**
 * The dashboard in headless Chromium against a real, listening service with data: sign-in (a wrong
 * key first), a webhook endpoint on a loopback receiver with a test event, a failed delivery retried
 * by hand, a recovery, an endpoint switched off for failing flagged with its reason, the event catalog, credits added to a wallet with the balance and its chart changing, a user's session
 * revoked, every page at desktop width and at 375 px, and CSRF refused. Screenshots of every page go
 * to test-results/dashboard/ (not committed).
 */
const CHROMIUM = '/usr/bin/chromium';
const required = process.env['SVC_TEST_REQUIRE_SERVICES'] === '1';
const chromiumMissing = !existsSync(CHROMIUM);
if (chromiumMissing && !required) process.stdout.write(`\nSKIPPING the dashboard browser test: ${CHROMIUM} is missing.\n\n`);

const REPOSITORY = fileURLToPath(new URL('../../../../../', import.meta.url));
const SCREENSHOTS = `${REPOSITORY}test-results/dashboard`;
const BUNDLE_CHECK = `${REPOSITORY}packages/dashboard/scripts/check-bundle-size.js`;

/** The service reads the built page when it starts, so the build must exist before useTestService's own beforeAll. */
function ensureDashboardBuilt(): void {
  if (existsSync(`${DASHBOARD_DIST_DIR}index.html`)) return;
  execFileSync('npm', ['run', 'build', '--silent', '-w', '@svc/dashboard'], { cwd: REPOSITORY, stdio: 'inherit' });
}

describe.skipIf(chromiumMissing && !required)('the operator dashboard in headless Chromium', () => {
  beforeAll(ensureDashboardBuilt, 120_000);
  // No automatic retry within the test: the second attempt is due a minute after a failure.
  const test = useTestService('sqlite', { env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,60' } });

  let baseUrl = '';
  let receiver: Server;
  let receiverUrl = '';
  let receiverStatus = 200;
  const received: string[] = [];
  let browser: Browser;
  const seeded = { userId: '', email: 'grace@example.com', walletId: '', sessionName: '' };

  beforeAll(async () => {
    const { service, auth } = test();
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push(body);
        response.writeHead(receiverStatus, { 'content-type': 'text/plain' }).end(receiverStatus === 200 ? 'ok' : 'receiver is down');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    baseUrl = await service.app.listen({ host: '127.0.0.1', port: 0 });
    service.webhooks.worker.start();

    const signup = await service.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: auth,
      payload: { email: seeded.email, password: 'a long enough passphrase', name: 'Grace Hopper' },
    });
    expect(signup.statusCode, signup.body).toBe(201);
    const { user, session } = signup.json<{ user: { id: string }; session: { id: string } }>();
    seeded.userId = user.id;
    seeded.sessionName = session.id.split('.')[0]!;
    // A passkey of the user, for the user page to list and remove.
    const passkeys = passkeyClient(service, test().secretKey);
    await configureRelyingParty(passkeys);
    await registerPasskey(passkeys, session.id, new SoftwareAuthenticator({ origin: ORIGIN }), 'Grace’s laptop');
    // An authenticator app, for the user page's second factors and their reset.
    const asUser = { authorization: `Bearer ${session.id}` };
    const enrolled = await service.app.inject({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: asUser });
    const confirmed = await service.app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: asUser,
      payload: { code: totpCode(enrolled.json<{ secret: string }>().secret, timeStep(new Date())) },
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const wallet = await service.app.inject({
      method: 'POST',
      url: '/v1/wallets',
      headers: auth,
      payload: { user_id: user.id, currency: 'USD' },
    });
    seeded.walletId = wallet.json<{ id: string }>().id;

    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (receiver === undefined ? resolve() : receiver.close(() => resolve())));
  });

  const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  async function openPage(page: Page, label: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: label, exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(label);
  }

  /** Clicks Refresh until `check` holds: deliveries are made by the worker, not by the request. */
  async function refreshUntil(page: Page, check: () => Promise<boolean>): Promise<void> {
    for (let round = 0; round < 40; round += 1) {
      if (await check()) return;
      await page.waitForTimeout(250);
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
    throw new Error('the page never showed what was expected');
  }

  it('runs the service end to end', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const posts: { url: string; idempotencyKey: string | undefined; csrf: string | undefined }[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST')
        posts.push({ url: request.url(), idempotencyKey: request.headers()['idempotency-key'], csrf: request.headers()['x-csrf-token'] });
    });

    // The sign-in page opens without a request answered 401 and without a console error: with no
    // session marker cookie, the page knows it is signed out without asking.
    const unauthorized: string[] = [];
    const consoleErrors: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 401) unauthorized.push(`${response.request().method()} ${response.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`${baseUrl}/dashboard/`);
    const keyField = page.getByLabel('Secret key');
    await expect.poll(() => keyField.count()).toBe(1);
    await page.waitForLoadState('networkidle');
    expect(unauthorized).toEqual([]);
    expect(consoleErrors).toEqual([]);

    // Sign in: a wrong key is refused with a clear message; the right one opens the overview.
    await keyField.fill('svc_sk_thisIsNotAKeyOfThisProject0000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That key was not accepted');
    await shot(page, '00-sign-in-refused');
    await keyField.fill(test().secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    // The header shows the project's name, not its id (GET /v1/project).
    await expect.poll(() => page.getByTestId('project-name').textContent()).toBe('Test project');
    // HttpOnly: the page's scripts cannot read the session's cookie, only the marker beside it.
    expect(await page.evaluate(() => document.cookie)).toBe('svc_dashboard_signed_in=1');
    expect(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).not.toContain('svc_sk_');
    await shot(page, '01-overview-empty');

    // The cookie reaches /v1; a change without the CSRF header is refused.
    const probe = await page.evaluate(async () => {
      const read = await fetch('/v1/project');
      const change = await fetch('/v1/api-keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      return { read: read.status, change: change.status, code: ((await change.json()) as { error: { code: string } }).error.code };
    });
    expect(probe).toEqual({ read: 200, change: 403, code: 'csrf_token_invalid' });

    // Webhooks: create an endpoint on the loopback receiver; the secret is shown once.
    await openPage(page, 'Webhooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('URL', { exact: true }).fill(receiverUrl);
    await page.getByLabel('Description (optional)').fill('loopback receiver');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.getByTestId('secret-value').textContent()).toMatch(/^whsec_/);
    await shot(page, '02-webhooks-created');
    await page.getByTestId('endpoint-list').getByRole('link', { name: receiverUrl }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhook endpoint');

    // A test event is delivered, and its delivery appears with its status.
    await page.getByRole('button', { name: 'Send test event' }).click();
    await refreshUntil(page, async () => (await page.locator('[data-testid=delivery][data-status=succeeded]').count()) === 1);
    expect(received.some((body) => body.includes('"webhook.test"'))).toBe(true);
    expect(await page.getByTestId('attempt-status').first().textContent()).toBe('200');

    // The receiver fails: the next test event's attempt shows its 500; Retry, once it is back, delivers it.
    receiverStatus = 500;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await refreshUntil(page, async () => (await page.getByTestId('attempt-status').filter({ hasText: '500' }).count()) === 1);
    await shot(page, '03-webhook-delivery-failed');
    receiverStatus = 200;
    const failed = page.locator('[data-testid=delivery]', { has: page.getByTestId('attempt-status').filter({ hasText: '500' }) });
    await failed.getByRole('button', { name: /^Retry delivery/ }).click();
    await refreshUntil(page, async () => (await page.locator('[data-testid=delivery][data-status=succeeded]').count()) === 2);
    expect(await failed.locator('tbody tr').count()).toBe(2);
    await shot(page, '04-webhook-retried');

    // Recover: the form sends since a time (a day ago by default). The user's events (sign-up,
    // passkey, second factor) came before the endpoint existed and were never delivered to it: they
    // are sent now.
    await page.getByRole('button', { name: 'Recover', exact: true }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/^Recovery started: [1-9]\d* deliveries to send again\.$/);
    await expect.poll(() => received.some((body) => body.includes('"user.created"'))).toBe(true);
    // An endpoint the worker switched off for failing is flagged with its reason, here and in the list.
    const endpointId = (await page.locator('dl.facts dd code').first().textContent()) ?? '';
    await test()
      .service.db.kysely.updateTable('webhook_endpoints')
      .set({ enabled: 0, disabled_reason: 'failing' })
      .where('id', '=', endpointId)
      .execute();
    await page.reload();
    await expect.poll(() => page.getByTestId('endpoint-failing').count()).toBe(1);
    expect(await page.getByTestId('endpoint-status').first().textContent()).toContain('disabled: failing');
    await shot(page, '04b-webhook-disabled-failing');
    await openPage(page, 'Webhooks');
    expect(await page.getByTestId('endpoint-list').getByTestId('endpoint-status').textContent()).toContain('disabled: failing');
    await page.getByTestId('endpoint-list').getByRole('link', { name: receiverUrl }).click();
    await page.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => page.getByTestId('endpoint-failing').count()).toBe(0);

    // The event catalog: every type with its description, and the schema of its data on demand.
    await openPage(page, 'Event catalog');
    const catalog = page.getByTestId('event-type-list');
    await expect.poll(() => catalog.getByText('webhook_endpoint.disabled', { exact: true }).count()).toBe(1);
    await catalog.locator('li', { hasText: 'webhook_endpoint.disabled' }).getByRole('button', { name: 'Show schema' }).click();
    await expect.poll(() => catalog.textContent()).toContain('failing_since');
    // Descriptions are markdown, rendered: `expires_at` is a code element, no backtick is shown.
    const expired = catalog.locator('li', { hasText: 'wallet.hold.expired' });
    expect(await expired.locator('.markdown code', { hasText: 'expires_at' }).count()).toBe(1);
    expect((await catalog.locator('.markdown').allTextContents()).join('\n')).not.toContain('`');
    await shot(page, '04c-event-catalog');

    // Wallets: add credits through the confirmation; the balance and the chart change.
    await openPage(page, 'Wallets');
    await shot(page, '05-wallets');
    await page.getByRole('link', { name: seeded.walletId }).click();
    await expect.poll(() => page.getByTestId('wallet-balance').textContent()).toContain('0');
    await expect.poll(() => page.getByText('No transactions yet: the balance has not moved.').count()).toBe(1);
    for (const [typed, expected, points] of [
      ['1,500', '1,500', 1],
      ['250', '1,750', 2],
    ] as const) {
      await page.getByRole('button', { name: 'Add credits' }).click();
      await page.getByLabel('Amount (credits)').fill(typed);
      await page.getByRole('button', { name: 'Review' }).click();
      expect(await page.getByTestId('resulting-balance').textContent()).toBe(expected);
      await page.getByRole('button', { name: 'Confirm: add credits' }).click();
      await expect.poll(() => page.getByTestId('wallet-balance').textContent()).toContain(expected);
      await expect.poll(() => page.getByTestId('chart-balance').getAttribute('data-points')).toBe(String(points));
    }
    // The balance chart's time axis: round times in a unit that fits the span (seconds apart here),
    // distinct labels, no more than its width has room for (packages/dashboard/src/chart-axis.ts).
    const balanceChart = page.getByTestId('chart-balance');
    // The labels are written when the chart draws, a frame after its data: slow under a loaded CI.
    await expect
      .poll(async () => ((await balanceChart.getAttribute('data-x-labels')) ?? '').length, { timeout: 10_000 })
      .toBeGreaterThan(0);
    const timeLabels = ((await balanceChart.getAttribute('data-x-labels')) ?? '').split('|');
    expect(new Set(timeLabels).size).toBe(timeLabels.length);
    for (const label of timeLabels) expect(label).toMatch(/^\d\d:\d\d(:\d\d)?$|^[A-Z][a-z]{2} \d{1,2}$/);
    const balanceWidth = (await balanceChart.boundingBox())?.width ?? 0;
    expect(timeLabels.length).toBeLessThanOrEqual(Math.floor(balanceWidth / 56));
    const credits = posts.filter((post) => post.url.endsWith(`/v1/wallets/${seeded.walletId}/credits`));
    expect(credits).toHaveLength(2);
    for (const post of credits) expect(post.idempotencyKey).toMatch(/^dash_[0-9a-f]{32}$/);
    expect(credits[0]!.idempotencyKey).not.toBe(credits[1]!.idempotencyKey);
    expect(credits.every((post) => post.csrf !== undefined && post.csrf.length > 20)).toBe(true);
    expect(
      (await test().service.app.inject({ method: 'GET', url: `/v1/wallets/${seeded.walletId}`, headers: test().auth })).json().balance,
    ).toBe(1750);
    // Every credit is a grant; a hold made elsewhere shows with the credits it takes out of available.
    await expect.poll(() => page.getByTestId('grants').locator('tbody tr').count()).toBe(2);
    const hold = await test().service.app.inject({
      method: 'POST',
      url: `/v1/wallets/${seeded.walletId}/holds`,
      headers: test().auth,
      payload: { amount: 500, description: 'Render job' },
    });
    expect(hold.statusCode).toBe(201);
    await page.reload();
    await expect.poll(() => page.getByTestId('wallet-available').textContent()).toContain('1,250');
    await expect.poll(() => page.getByTestId('holds').textContent()).toContain('Render job');
    // The balance by category: both credits were `default`, the hold's reservation stays counted.
    await expect.poll(() => page.getByTestId('wallet-categories').textContent()).toContain('default1,750');
    // A recurring grant made elsewhere is listed, and cancelled from the page.
    const recurring = await test().service.app.inject({
      method: 'POST',
      url: `/v1/wallets/${seeded.walletId}/recurring-grants`,
      headers: test().auth,
      payload: { amount: 100, interval: 'month', starts_at: new Date(Date.now() + 86_400_000).toISOString(), description: 'Pro plan' },
    });
    expect(recurring.statusCode).toBe(201);
    await page.reload();
    await expect.poll(() => page.getByTestId('recurring-grants').textContent()).toContain('Pro plan');
    await page.getByRole('button', { name: `Cancel recurring grant ${recurring.json<{ id: string }>().id}` }).click();
    await expect.poll(() => page.getByTestId('recurring-grants').textContent()).toContain('cancelled');
    await shot(page, '06-wallet');

    // Users: find by email, revoke the session, see it gone.
    await openPage(page, 'Users');
    await page.getByLabel('Search by email').fill(seeded.email);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: seeded.email }).click();
    await expect.poll(() => page.getByTestId('session-list').textContent()).toContain(seeded.sessionName);
    await shot(page, '07-user');
    await page.getByRole('button', { name: `Revoke session ${seeded.sessionName}` }).click();
    await expect.poll(() => page.getByText('No active sessions.').count()).toBe(1);
    const sessions = await test().service.app.inject({ method: 'GET', url: `/v1/users/${seeded.userId}/sessions`, headers: test().auth });
    expect(sessions.json<{ data: unknown[] }>().data).toHaveLength(0);
    // The user's passkey, removed from the user page.
    await expect.poll(() => page.getByTestId('passkey-list').textContent()).toContain('Grace’s laptop');
    await page.getByRole('button', { name: 'Remove passkey Grace’s laptop' }).click();
    await expect.poll(() => page.getByText('No passkeys.', { exact: false }).count()).toBe(1);
    const passkeysLeft = await test().service.app.inject({
      method: 'GET',
      url: `/v1/users/${seeded.userId}/passkeys`,
      headers: test().auth,
    });
    expect(passkeysLeft.json<{ data: unknown[] }>().data).toHaveLength(0);
    // Second factors: the authenticator and its ten recovery codes, then the administrator's reset.
    await expect.poll(() => page.getByTestId('mfa-status').textContent()).toMatch(/active since.*Recovery codes left10/);
    await page.getByRole('button', { name: 'Reset second factors' }).click();
    await expect.poll(() => page.getByTestId('mfa-status').textContent()).toContain('Authenticator appnone');
    const factors = await test().service.app.inject({ method: 'GET', url: `/v1/users/${seeded.userId}/mfa`, headers: test().auth });
    expect(factors.json()).toMatchObject({ totp: { status: 'none' }, recovery_codes_left: 0 });

    // Every other page, with data where there is some.
    await openPage(page, 'Overview');
    await expect.poll(() => page.getByTestId('credits-in-circulation').textContent()).toBe('1,750');
    await expect.poll(() => page.getByTestId('chart-credits').count()).toBe(1);
    await expect.poll(() => page.getByTestId('chart-webhooks').count()).toBe(1);
    // The credits chart's axis ends past today's bar (packages/dashboard/src/chart-axis.ts):
    // its last label is today and its range runs past today's noon. The axes are drawn on a canvas,
    // so the chart writes both on its element.
    const creditsChart = page.getByTestId('chart-credits');
    const today = () => new Date().toISOString().slice(0, 10);
    const before = today();
    const lastTick = await creditsChart.getAttribute('data-last-tick');
    expect([before, today()]).toContain(lastTick);
    expect(Number(await creditsChart.getAttribute('data-x-max'))).toBeGreaterThanOrEqual(Date.parse(`${lastTick}T12:00:00.000Z`) / 1000);
    // With nothing hovered the legends show the period's totals (not "--" or "—").
    const creditsLegend = await page.getByTestId('chart-credits-legend').textContent();
    expect(creditsLegend).toContain('Last 30 days');
    expect(creditsLegend).toContain('Added 1,750');
    expect(creditsLegend).not.toMatch(/--|—/);
    const webhooksLegend = await page.getByTestId('chart-webhooks-legend').textContent();
    expect(webhooksLegend).toMatch(/Succeeded [1-9]/); // the test events and the credits' events
    expect(webhooksLegend).toContain('Failed 1'); // the test event the receiver answered with 500
    expect(webhooksLegend).not.toMatch(/--|—/);
    await shot(page, '08-overview');
    await openPage(page, 'Events');
    await page.getByRole('button', { name: 'Show data' }).first().click();
    await expect.poll(() => page.locator('pre.json').count()).toBe(1);
    await shot(page, '09-events');
    await openPage(page, 'API keys');
    await page.getByLabel('New key name (optional)').fill('from the browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.getByTestId('secret-value').textContent()).toMatch(/^svc_sk_/);
    await expect.poll(() => page.getByTestId('key-list').textContent()).toContain('in use here');
    await shot(page, '10-api-keys');
    // Signing keys: the signing and the next key (made with the seeded user's session), public halves
    // only; a dismissed confirmation rotates nothing, an accepted one makes the next key sign.
    const keyLists: string[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/v1/project/signing-keys')) void response.text().then((body) => keyLists.push(body));
    });
    await openPage(page, 'Signing keys');
    const keyRows = page.getByTestId('signing-key');
    await expect.poll(() => keyRows.count()).toBe(2);
    const kidOf = async (status: string) =>
      (await page.locator(`[data-testid=signing-key][data-status=${status}] code`).textContent()) ?? '';
    const [signingKid, nextKid] = [await kidOf('signing'), await kidOf('next')];
    expect(signingKid).toMatch(/^sjk_/);
    expect(await page.getByTestId('signing-key-list').textContent()).toContain('ES256');
    expect(await page.getByTestId('jwks-url').textContent()).toBe(`${baseUrl}/v1/projects/${test().projectId}/jwks.json`);
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.waitForTimeout(200);
    expect(await kidOf('signing')).toBe(signingKid);
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('Rotate the signing key?');
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(`Rotated: ${nextKid} signs from now on.`);
    await expect.poll(() => keyRows.count()).toBe(3);
    expect([await kidOf('signing'), await kidOf('retiring')]).toEqual([nextKid, signingKid]);
    const published = await test().service.app.inject({ method: 'GET', url: `/v1/projects/${test().projectId}/jwks.json` });
    const publishedKids = published.json<{ keys: Array<{ kid: string }> }>().keys.map((key) => key.kid);
    expect(publishedKids.sort()).toEqual((await keyRows.locator('code').allTextContents()).sort());
    expect(keyLists.length).toBeGreaterThanOrEqual(2);
    for (const body of keyLists) expect(body).not.toMatch(/private|"d"|BEGIN|"x"|"n"/);
    expect(posts.filter((post) => post.url.endsWith('/v1/project/signing-keys/rotate'))).toHaveLength(1);
    await shot(page, '10b-signing-keys');
    await openPage(page, 'Organizations');
    await shot(page, '11-organizations');
    await openPage(page, 'Audit log');
    await shot(page, '12-audit-log');
    await openPage(page, 'Settings');
    await shot(page, '13-settings');

    // Readable at 375 px: nothing wider than the screen.
    await page.setViewportSize({ width: 375, height: 812 });
    for (const label of ['Overview', 'Wallets', 'Webhooks']) {
      await openPage(page, label);
      // Elements reaching past the right edge, outside the parts that scroll sideways on purpose.
      const overflowing = await page.evaluate<string[]>(
        `[...document.querySelectorAll('body *')]
          .filter((element) => element.getBoundingClientRect().right > 376 && !element.closest('.table-wrap, .side, pre'))
          .map((element) => element.tagName.toLowerCase() + '.' + element.className)
          .slice(0, 5)`,
      );
      expect(overflowing, label).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      await shot(page, `14-mobile-${label.toLowerCase()}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    await page.goto(`${baseUrl}/dashboard/`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');

    // Sign out ends the session on the server, not only in this tab.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByLabel('Secret key').count()).toBe(1);
    // Loaded again after signing out, the sign-in page asks nothing that answers 401 either.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    unauthorized.length = 0;
    consoleErrors.length = 0;
    await page.reload();
    await expect.poll(() => page.getByLabel('Secret key').count()).toBe(1);
    await page.waitForLoadState('networkidle');
    expect(unauthorized).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(await page.evaluate(async () => (await fetch('/v1/project')).status)).toBe(401);
    expect(pageErrors).toEqual([]);
    await context.close();
  }, 120_000);

  it('serves hashed assets for a year and index.html revalidated, gzipped when asked', async () => {
    const index = await fetch(`${baseUrl}/dashboard/wallets/anything`, { headers: { 'accept-encoding': 'gzip' } });
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    const html = await index.text();
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${baseUrl}${script!}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('gzip');
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    expect((await fetch(`${baseUrl}/dashboard/assets/missing-0000.js`)).status).toBe(404);
  });

  it('keeps the first page under 250 KB of gzipped JavaScript', () => {
    const output = execFileSync('node', [BUNDLE_CHECK], { encoding: 'utf8' });
    const match = /first page JavaScript: ([\d.]+) kB gzipped, within/.exec(output);
    expect(match, output).not.toBeNull();
    expect(Number(match![1])).toBeLessThan(250);
  });
});
