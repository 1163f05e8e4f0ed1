// coverage-dashboard.mjs: the build coverage on the dashboard, in Debian's chromium
// (through Debian's chromedriver, tests/lib/webdriver.mjs).
//
// node tests/lib/coverage-dashboard.mjs BASE_URL CANDIDATE_ID WARNED_PATCH_ID NOT_BUILT_PATCH_ID
// Prints one JSON object a line: {ok, name, diag?}; tests/5-kernel/52-coverage.t turns them into TAP.
import { Browser, request } from './webdriver.mjs';

const [base, cid, warned, other] = process.argv.slice(2);
const say = (ok, name, diag) => console.log(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? undefined : String(diag) }));
const T = 15000;
let page;
try {
	page = await Browser.open({ width: 1280, height: 720, timeout: T });
	const api = async p => (await request('GET', base + '/api/v1' + p)).json();

	const c = await api('/candidates/' + cid);
	await page.goto(base + '/#/candidate/' + cid);
	await page.waitFor('.cov-summary');
	const shown = await page.textContent('.cov-summary');
	say(shown === c.coverage.summary, 'the candidate page shows the coverage summary', shown);
	const rows = await page.count('table.coverage-patches > tbody > tr');
	say(rows === c.coverage.patches.length && rows > 0, `the candidate page has a row per patch (${rows})`);

	const p = await api('/patches/' + warned);
	await page.goto(base + '/#/patch/' + warned);
	await page.waitFor('table.coverage');
	const text = await page.textContent(['table.coverage', 0]);
	say(text.includes(p.coverage.files[0].path) && text.includes(p.coverage.files[0].objects[0]) &&
		text.includes('unused variable'), 'the patch page shows the file, its object and the new warning', text.slice(0, 300));

	const q = await api('/patches/' + other);
	await page.goto(base + '/#/patch/' + other);
	await page.waitFor('table.coverage');
	const t2 = await page.textContent(['table.coverage', 0]);
	say(t2.includes(q.coverage.files[0].status) && t2.includes(q.coverage.files[0].detail || q.coverage.files[0].config),
		'the arm64 patch page says whether and how it was built', t2.slice(0, 300));
} catch (e) {
	say(false, 'the dashboard run', e.stack || e);
} finally {
	if (page)
		await page.close();
}
