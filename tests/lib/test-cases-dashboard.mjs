// test-cases-dashboard.mjs: a candidate's page leads with its regressions, in Debian's chromium
// (through Debian's chromedriver, tests/lib/webdriver.mjs).
//
// node tests/lib/test-cases-dashboard.mjs BASE_URL CANDIDATE_ID HOSTILE_NAME
// Prints one JSON object a line: {ok, name, diag?}; tests/6-api/69-test-cases-api.t turns them into TAP.
import { Browser } from './webdriver.mjs';

const [base, cid, hostile] = process.argv.slice(2);
const say = (ok, name, diag) => console.log(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? undefined : String(diag) }));
const T = 15000;
let page;
try {
	page = await Browser.open({ width: 1280, height: 720, timeout: T });
	await page.goto(base + '/#/candidate/' + cid);
	await page.waitFor('.standing');
	const order = await page.evalAll('.standing', els => els.map(e => e.dataset.standing));
	say(JSON.stringify(order) === '["regression","flaky","known"]',
		'the candidate page leads with regressions, then flaky, then known failures', order);
	const heads = await page.texts('.standing-head');
	say(heads[0] === '2 regressions' && heads[1] === '1 flaky test' && heads[2].startsWith('1 known failure'),
		'each group says how many', heads);
	const reg = await page.texts('.standing[data-standing="regression"] .failure');
	say(reg.some(x => x.includes('(fail, fail) EXPECTATION FAILED a')), 'a regression shows its boots and its failure', reg);
	/* a KUnit case is shown under its suite: the name after "kunit.s." */
	say(reg.some(x => x.includes(hostile.replace(/^kunit\.s\./, ''))), 'a hostile test name is shown as text', reg);
	say(await page.count('.standing img, .standing script') === 0, '... and makes no element');
	const passed = await page.texts('details.passed > summary');
	say(passed.length === 1 && passed[0].startsWith('1 passed'), 'passes are a count', passed);
} catch (e) {
	say(false, 'the dashboard run', e.stack || e);
} finally {
	if (page)
		await page.close();
}
