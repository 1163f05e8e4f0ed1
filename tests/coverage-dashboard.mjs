// coverage-dashboard.mjs: the build coverage on the dashboard, in Debian's chromium (playwright-core).
//
// node tests/coverage-dashboard.mjs BASE_URL CANDIDATE_ID WARNED_PATCH_ID NOT_BUILT_PATCH_ID
// Prints one JSON object a line: {ok, name, diag?}; tests/52-coverage.t turns them into TAP.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, cid, warned, other] = process.argv.slice(2);
const say = (ok, name, diag) => console.log(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? undefined : String(diag) }));
const T = 15000;
const profile = mkdtempSync(join(tmpdir(), 'stableq-chromium.'));
let ctx;
try {
	ctx = await chromium.launchPersistentContext(profile, {
		executablePath: '/usr/bin/chromium', headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
	});
	const page = ctx.pages()[0] || await ctx.newPage();
	const api = async p => (await page.request.get(base + '/api/v1' + p)).json();

	const c = await api('/candidates/' + cid);
	await page.goto(base + '/#/candidate/' + cid, { timeout: T });
	await page.waitForSelector('.cov-summary', { timeout: T });
	const shown = await page.locator('.cov-summary').textContent();
	say(shown === c.coverage.summary, 'the candidate page shows the coverage summary', shown);
	const rows = await page.locator('table.coverage-patches > tbody > tr').count();
	say(rows === c.coverage.patches.length && rows > 0, `the candidate page has a row per patch (${rows})`);

	const p = await api('/patches/' + warned);
	await page.goto(base + '/#/patch/' + warned, { timeout: T });
	await page.waitForSelector('table.coverage', { timeout: T });
	const text = await page.locator('table.coverage').first().textContent();
	say(text.includes(p.coverage.files[0].path) && text.includes(p.coverage.files[0].objects[0]) &&
		text.includes('unused variable'), 'the patch page shows the file, its object and the new warning', text.slice(0, 300));

	const q = await api('/patches/' + other);
	await page.goto(base + '/#/patch/' + other, { timeout: T });
	await page.waitForSelector('table.coverage', { timeout: T });
	const t2 = await page.locator('table.coverage').first().textContent();
	say(t2.includes(q.coverage.files[0].status) && t2.includes(q.coverage.files[0].detail || q.coverage.files[0].config),
		'the arm64 patch page says whether and how it was built', t2.slice(0, 300));
} catch (e) {
	say(false, 'the dashboard run', e.stack || e);
} finally {
	if (ctx)
		await ctx.close();
	rmSync(profile, { recursive: true, force: true });
}
