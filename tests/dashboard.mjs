// dashboard.mjs: drives Debian's chromium (playwright-core) through the stableq dashboard.
//
// node tests/dashboard.mjs BASE_URL TOKEN PATCH_ID SHOT_DIR
// Prints one JSON object a line: {ok, name, diag?}; tests/70-dashboard.t
// turns them into TAP and checks the results through the API.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, token, patchId, shots] = process.argv.slice(2);
const say = (ok, name, diag) => console.log(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? undefined : String(diag) }));
const T = 15000;

const profile = mkdtempSync(join(tmpdir(), 'stableq-chromium.'));
let ctx;
try {
	ctx = await chromium.launchPersistentContext(profile, {
		executablePath: '/usr/bin/chromium',
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
		viewport: { width: 1280, height: 900 },
	});
	const page = ctx.pages()[0] || await ctx.newPage();
	const errors = [];
	const outside = [];
	page.on('pageerror', e => errors.push(e.message));
	// the browser's own "Failed to load resource" lines are judged by their responses
	page.on('console', m => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });
	const failed = [];
	page.on('response', r => {
		const wrongToken = r.status() === 403 && r.request().method() === 'POST' && r.url().endsWith('/flag');
		if (r.status() >= 400 && !wrongToken)
			failed.push(r.status() + ' ' + r.request().method() + ' ' + r.url());
	});
	page.on('request', r => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) outside.push(r.url()); });

	// A kept-alive socket the server closed (http_timeout = 3 s) hangs up: once more on a new one.
	const api = async path => {
		try {
			return await (await page.request.get(base + '/api/v1' + path)).json();
		} catch (e) {
			return (await page.request.get(base + '/api/v1' + path, { headers: { Connection: 'close' } })).json();
		}
	};

	// ---- the queue at 1280 px ----
	await page.goto(base + '/', { timeout: T });
	await page.waitForSelector('table.patches tbody tr', { timeout: T });
	const health = await (await page.request.get(base + '/api/v1/health')).json();
	const list = await (await page.request.get(base + '/api/v1/patches?limit=100')).json();
	const rows = await page.locator('table.patches tbody tr').count();
	say(rows === list.patches.length, `the queue shows every patch (${rows} rows, ${list.total} patches)`);
	const subjects = await page.locator('table.patches .subject').allTextContents();
	say(list.patches.every(p => subjects.includes(p.subject)), 'each row shows its patch\'s subject from the API');
	const counts = {};
	for (const s of Object.keys(health.queue)) {
		const t = await page.locator(`.counts a.st-${s} b`).textContent();
		counts[s] = Number(t);
	}
	say(Object.keys(health.queue).every(s => counts[s] === health.queue[s]),
		'the state counts match /health', JSON.stringify({ page: counts, api: health.queue }));
	const held = await page.locator('tr.held').count();
	say(held === (health.queue.held || 0) && held > 0, `held fix-ups are highlighted (${held})`);
	const chips = await page.locator('table.patches .chip').count();
	const goodChips = await page.locator('table.patches .chip.good').count();
	const badChips = await page.locator('table.patches .chip.bad, table.patches .chip.warn').count();
	say(chips > 0 && goodChips > 0 && badChips > 0, `verdicts are coloured per check (${goodChips} good, ${badChips} bad or unsure of ${chips})`);
	say(await page.locator('.progress').count() === 1, 'the work in progress line is shown');
	const bar = await page.locator('.progress .pbar[data-kind=build]').innerText().catch(e => String(e));
	say(bar.includes('building: 120/654 objects (18%)'), 'a build in progress shows its objects done of total', bar);
	await page.screenshot({ path: join(shots, 'dashboard-queue-1280.png'), fullPage: true });

	// filtering by state
	await page.click('.counts a.st-held');
	await page.waitForFunction(() => location.hash.includes('state=held'), null, { timeout: T });
	await page.waitForSelector('h1:has-text("held")', { timeout: T });
	const heldRows = await page.locator('table.patches tbody tr').count();
	say(heldRows === health.queue.held, `the held filter shows the held patches (${heldRows})`);

	// ---- a patch page ----
	await page.goto(base + '/#/patch/' + patchId, { timeout: T });
	await page.waitForSelector('table.verdicts', { timeout: T });
	const p = await (await page.request.get(base + '/api/v1/patches/' + patchId)).json();
	const vtext = await page.locator('table.verdicts').innerText();
	const checks = Object.keys(p.verdicts);
	say(checks.length > 0 && checks.every(c => vtext.includes(c) && vtext.includes(p.verdicts[c].result) &&
		vtext.includes(p.verdicts[c].detail.slice(0, 40))),
		`the patch page shows its verdicts with their reasons (${checks.join(', ')})`, vtext.slice(0, 400));
	say((await page.locator('h1').innerText()).includes(p.subject), 'the patch page shows its subject');
	say((await page.locator('.state').first().innerText()) === p.state, `... and its state (${p.state})`);
	await page.screenshot({ path: join(shots, 'dashboard-patch-1280.png'), fullPage: true });

	// ---- flag it broken through the page ----
	await page.fill('#flag-form input[name=token]', 'f'.repeat(64));
	await page.fill('#flag-form textarea[name=reason]', 'oops: a wrong token');
	await page.click('#flag-button');
	await page.waitForSelector('#flag-form .msg.bad', { timeout: T });
	const refused = await page.locator('#flag-form .msg').innerText();
	say(refused.includes('403'), 'a wrong token is refused on the page', refused);
	await page.fill('#flag-form input[name=token]', token);
	await page.fill('#flag-form textarea[name=reason]', 'Flagged from the dashboard: breaks boot on my laptop');
	await page.click('#flag-button');
	await page.waitForFunction(() => {
		const s = document.querySelector('.state');
		return s && s.textContent === 'broken';
	}, null, { timeout: T });
	say(true, 'flagging through the page turns the patch broken on the page');
	const stored = await page.evaluate(() => localStorage.getItem('stableq.token'));
	say(stored === token, 'the token is kept in localStorage');
	await page.waitForSelector('section:has(h2:text("Flags"))', { timeout: T });
	const flags = await page.locator('section:has(h2:text("Flags"))').innerText();
	say(flags.includes('Flagged from the dashboard') && flags.includes('token:'), 'the flag and who set it are shown', flags);
	await page.screenshot({ path: join(shots, 'dashboard-patch-flagged-1280.png'), fullPage: true });

	// ---- what failed leads the patch and candidate pages ----
	const failCand = process.env.FAIL_CANDIDATE;
	await page.goto(base + '/#/patch/' + patchId, { timeout: T });
	await page.waitForSelector('.failure', { timeout: T });
	const leads = await page.evaluate(() => {
		const f = document.querySelector('.failure');
		const v = document.querySelector('table.verdicts');
		return !!(f && v && (f.compareDocumentPosition(v) & Node.DOCUMENT_POSITION_FOLLOWING));
	});
	say(leads, 'the patch page leads with what failed: the failing tests come before the verdicts');
	const blk = page.locator('.cand', { has: page.locator(`a[href="#/candidate/${failCand}"]`) });
	const failNames = await blk.locator('.failure').evaluateAll(els => els.map(e => e.dataset.test));
	say(JSON.stringify(failNames) === JSON.stringify(['kunit', 'kunit.cmdline.cmdline_test_tail_int', 'user-copy']),
		'the failing tests are listed, in the order they failed', JSON.stringify(failNames));
	const uc = await blk.locator('.failure[data-test="user-copy"] pre').innerText().catch(e => String(e));
	say(uc.includes('stale value 0x5a5a') && await blk.locator('.failure[data-test="user-copy"] pre').isVisible(),
		'... each with its log excerpt, shown', uc);
	const suiteHead = await blk.locator('.suite.failed[data-suite="kunit.cmdline"] .suite-head').innerText().catch(e => String(e));
	say(suiteHead.includes('kunit.cmdline') && suiteHead.includes('1 of 8 cases failed'),
		'a failing KUnit case is shown under its suite', suiteHead);
	const passedSummary = await blk.locator('details.passed > summary').innerText().catch(e => String(e));
	say(passedSummary.trim() === '92 passed', 'the passing tests are folded into a count', passedSummary);
	say(!(await blk.locator('details.passed table').isVisible()), '... and no passing test is listed until asked');
	const topFail = await blk.locator('.failure').first().boundingBox();
	const topSummary = await blk.locator('details.passed > summary').boundingBox();
	say(topFail && topSummary && topFail.y < topSummary.y, 'failures come before the count of passes');
	await page.screenshot({ path: join(shots, 'dashboard-patch-failed-1280.png'), fullPage: true });
	await blk.locator('details.passed > summary').click();
	const passRows = await blk.locator('details.passed tbody tr').count();
	const listRow = await blk.locator('details.passed tr[data-suite="kunit.list"]').innerText().catch(e => String(e));
	say(passRows === 8 && listRow.includes('40 cases'),
		`opened, the passes are grouped: KUnit cases by suite (${passRows} rows)`, listRow.slice(0, 200));

	await page.goto(base + '/#/candidate/' + failCand, { timeout: T });
	await page.waitForSelector('.failure', { timeout: T });
	const summ = await page.locator('.summary').innerText({ timeout: T }).catch(async e =>
		String(e) + '\npage: ' + await page.locator('#view').innerText().catch(() => '') + '\napi: ' +
		JSON.stringify(await api('/candidates/' + failCand)).slice(0, 600));
	say(summ.startsWith(`candidate ${failCand}: fail: kunit, kunit.cmdline.cmdline_test_tail_int, user-copy`),
		'the candidate page says what it found in one line', summ);
	const cFirst = await page.locator('.cand > *:not(.line)').first().getAttribute('class');
	say(cFirst === 'results' && await page.locator('.results > .failures').count() === 1 &&
		(await page.locator('.results > *').first().getAttribute('class')) === 'failures',
		'the candidate page leads with its failures', cFirst);
	await page.screenshot({ path: join(shots, 'dashboard-candidate-failed-1280.png'), fullPage: true });

	// ---- the other pages ----
	for (const [hash, sel, name] of [
		['#/candidates', 'h1:has-text("Candidates")', 'candidates'],
		['#/bisections', 'h1:has-text("Bisections")', 'bisections'],
		['#/reverts', 'h1:has-text("Reverts")', 'reverts'],
		['#/mail', 'h1:has-text("Mail outbox")', 'mail'],
		['#/events', 'h1:has-text("Events")', 'events'],
	]) {
		await page.goto(base + '/' + hash, { timeout: T });
		await page.waitForSelector(sel, { timeout: T });
		const n = await page.locator('#view tbody tr').count();
		say(n > 0, `the ${name} page lists its rows (${n})`);
		if (name === 'bisections' || name === 'mail' || name === 'reverts')
			await page.screenshot({ path: join(shots, `dashboard-${name}-1280.png`), fullPage: true });
	}
	const bis = await (await page.request.get(base + '/api/v1/bisections')).json();
	if (bis.bisections.length) {
		await page.goto(base + '/#/bisection/' + bis.bisections[0].id, { timeout: T });
		await page.waitForSelector('.bar .cell', { timeout: T });
		const steps = await page.locator('#view tbody tr').count();
		const b = await (await page.request.get(base + '/api/v1/bisections/' + bis.bisections[0].id)).json();
		say(steps === b.steps.length, `the bisection page shows its steps (${steps})`);
		await page.screenshot({ path: join(shots, 'dashboard-bisection-1280.png'), fullPage: true });
	} else {
		say(false, 'a bisection to show');
	}

	// ---- refreshes by itself ----
	await page.goto(base + '/', { timeout: T });
	await page.waitForSelector('table.patches tbody tr', { timeout: T });
	const before = await page.locator('table.patches tbody tr').count();
	const r = await page.request.post(base + '/api/v1/patches', {
		headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'text/plain' },
		data: process.env.EXTRA_PATCH,
	});
	say(r.status() === 201, 'a patch imported while the page is open');
	await page.waitForFunction(n => document.querySelectorAll('table.patches tbody tr').length === n + 1,
		before, { timeout: T });
	say(true, 'the queue page shows it without a reload');

	// ---- two branches: the panel, the selector, the fix x branch matrix ----
	await page.goto(base + '/', { timeout: T });
	await page.waitForSelector('#branches tr[data-branch]', { timeout: T });
	const brs = (await api('/branches')).branches;
	const panel = {};
	for (const b of brs)
		panel[b.key] = await page.locator(`#branches tr[data-branch="${b.key}"] .waits`).innerText().catch(e => String(e));
	say(brs.length === 2 && brs.every(b => panel[b.key] === b.waits_for),
		'the branches panel says what each branch waits for, as GET /branches', JSON.stringify({ panel, api: brs.map(b => b.waits_for) }));
	const opts = await page.locator('#branch option').evaluateAll(os => os.map(o => o.value || 'all'));
	say(JSON.stringify(opts) === JSON.stringify(['all', '6.1', '6.12']), 'the header\'s branch selector: all, 6.1, 6.12', JSON.stringify(opts));

	await page.selectOption('#branch', '6.12');
	await page.waitForSelector('h1:has-text("Queue 6.12")', { timeout: T });
	const l612 = await api('/patches?branch=6.12&limit=100');
	const tags = await page.locator('table.patches .branch-tag').allTextContents();
	say(l612.total > 0 && tags.length === l612.patches.length && tags.every(x => x === '6.12'),
		`6.12 selected: the queue shows 6.12's patches only (${tags.length} of ${l612.total})`, JSON.stringify(tags));
	const b612 = brs.find(b => b.key === '6.12');
	const c612 = {};
	for (const st of Object.keys(b612.patches))
		c612[st] = Number(await page.locator(`.counts a.st-${st} b`).textContent());
	say(Object.keys(b612.patches).every(st => c612[st] === b612.patches[st]),
		'... and the counts are 6.12\'s', JSON.stringify({ page: c612, api: b612.patches }));
	say(await page.locator('#branches tr.on[data-branch="6.12"]').count() === 1, '... its row of the panel is marked');
	await page.screenshot({ path: join(shots, 'dashboard-queue-6.12-1280.png'), fullPage: true });
	for (const [hash, sel, path, key] of [
		['#/candidates', 'h1:has-text("Candidates 6.12")', '/candidates?limit=100&branch=6.12', 'candidates'],
		['#/bisections', 'h1:has-text("Bisections 6.12")', '/bisections?limit=100&branch=6.12', 'bisections'],
		['#/reverts', 'h1:has-text("Reverts 6.12")', '/reverts?branch=6.12', 'reverts'],
	]) {
		await page.goto(base + '/' + hash, { timeout: T });
		await page.waitForSelector(sel, { timeout: T });
		const want = (await api(path))[key].length;
		const shown = await page.locator('#view tbody tr').count();
		const keys = await page.locator('#view tbody .branch-tag').allTextContents();
		say(shown === want && keys.every(x => x === '6.12'), `the ${key} page keeps to 6.12 (${shown} of ${want})`, JSON.stringify(keys));
	}

	await page.goto(base + '/#/fixes', { timeout: T });
	await page.waitForSelector('h1:has-text("Fixes by branch")', { timeout: T });
	const mFix = await api('/fixes?branch=6.12&limit=100');
	say(await page.locator('table.fixes tbody tr').count() === mFix.fixes.length,
		`the matrix keeps to the fixes on 6.12 (${mFix.fixes.length})`);
	await page.selectOption('#branch', '');
	await page.waitForFunction(() => !document.querySelector('h1').textContent.includes(' on '), null, { timeout: T });
	const m = await api('/fixes?limit=100');
	const heads = await page.locator('table.fixes thead th').allTextContents();
	say(JSON.stringify(heads) === JSON.stringify(['Fix', '6.1', '6.12']), 'all branches: the matrix has a column per branch', JSON.stringify(heads));
	say(await page.locator('table.fixes tbody tr').count() === m.fixes.length, `... and a row per fix (${m.fixes.length})`);
	const both = m.fixes.find(f => f.subject === process.env.BOTH_SUBJECT);
	say(both && both.branches['6.1'] && both.branches['6.12'], 'the fix queued for both branches is one fix', JSON.stringify(both));
	if (both) {
		const rowB = page.locator(`table.fixes tr[data-fix="${both.fix}"]`);
		const cells = await rowB.locator('td.b-cell').evaluateAll(tds => tds.map(td => {
			const a = td.querySelector('a[href^="#/patch/"]'), st = td.querySelector('.state');
			return { link: a && a.getAttribute('href'), state: st && st.textContent, chips: td.querySelectorAll('.chip').length };
		}));
		say(cells.length === 2 && ['6.1', '6.12'].every((k, i) => cells[i].link === '#/patch/' + both.branches[k].id &&
			cells[i].state === both.branches[k].state && cells[i].chips === Object.keys(both.branches[k].verdicts).length),
		'... each cell: its branch\'s patch (a link), its state and a chip per check', JSON.stringify(cells));
		const notPresent = await rowB.locator('td.b-cell').evaluateAll(tds => tds.map(td => td.innerText.includes('bug not present')));
		say(JSON.stringify(notPresent) === '[false,true]' && both.branches['6.12'].checks.test === 'not-present',
			'... its 6.12 copy, whose own test passed without it, says "bug not present"; the 6.1 one does not', JSON.stringify(notPresent));
		await rowB.locator('td.b-cell').nth(1).locator('a[href^="#/patch/"]').click();
		await page.waitForSelector('table.verdicts', { timeout: T });
		say(page.url().includes('#/patch/' + both.branches['6.12'].id), 'a cell leads to its patch page', page.url());
		const meta = await page.locator('dl.meta').innerText();
		say(meta.includes('6.12'), '... which names its branch (6.12)', meta.slice(0, 300));
		await page.goto(base + '/#/fixes', { timeout: T });
		await page.waitForSelector('table.fixes', { timeout: T });
	}
	const only = m.fixes.find(f => f.subject === process.env.HOSTILE_SUBJECT);
	say(only && only.branches['6.1'] === null, 'a fix only for 6.12 has no patch on 6.1', JSON.stringify(only));
	if (only) {
		const cell61 = await page.locator(`table.fixes tr[data-fix="${only.fix}"] td.b-cell`).first().innerText();
		say(cell61.includes('not queued'), '... its 6.1 cell says "not queued"', cell61);
		const subj = await page.locator(`table.fixes tr[data-fix="${only.fix}"] .subject`).innerText();
		say(subj === process.env.HOSTILE_SUBJECT && await page.locator('#view img').count() === 0,
			'a subject with markup is shown as text, never as markup', subj);
	}
	await page.screenshot({ path: join(shots, 'dashboard-fixes-1280.png'), fullPage: true });
	await page.setViewportSize({ width: 375, height: 800 });
	await page.goto(base + '/#/fixes', { timeout: T });
	await page.waitForSelector('table.fixes tbody tr', { timeout: T });
	const wideFix = await page.evaluate(() => document.documentElement.scrollWidth);
	say(wideFix <= 375, `at 375 px the matrix needs no sideways scrolling (${wideFix} px wide)`);
	const cellLabel = await page.evaluate(() => getComputedStyle(document.querySelector('table.fixes td.b-cell'), '::before').content);
	say(cellLabel === '"6.1"', 'at 375 px each cell is labelled with its branch', cellLabel);
	await page.screenshot({ path: join(shots, 'dashboard-fixes-375.png'), fullPage: true });
	await page.setViewportSize({ width: 1280, height: 900 });

	// ---- a phone ----
	await page.setViewportSize({ width: 375, height: 800 });
	await page.goto(base + '/', { timeout: T });
	await page.waitForSelector('table.patches tbody tr', { timeout: T });
	const wide = await page.evaluate(() => document.documentElement.scrollWidth);
	say(wide <= 375, `at 375 px the queue needs no sideways scrolling (${wide} px wide)`);
	const cardish = await page.evaluate(() => getComputedStyle(document.querySelector('table.patches tbody tr')).display);
	say(cardish === 'block', 'at 375 px rows become cards');
	await page.screenshot({ path: join(shots, 'dashboard-queue-375.png'), fullPage: true });
	await page.goto(base + '/#/patch/' + patchId, { timeout: T });
	await page.waitForSelector('table.verdicts', { timeout: T });
	const wide2 = await page.evaluate(() => document.documentElement.scrollWidth);
	say(wide2 <= 375, `at 375 px the patch page needs no sideways scrolling (${wide2} px wide)`);
	await page.screenshot({ path: join(shots, 'dashboard-patch-375.png'), fullPage: true });

	say(errors.length === 0, 'no JavaScript errors', errors.join('\n'));
	say(failed.length === 0, 'no request failed (but the one with the wrong token)', failed.join('\n'));
	say(outside.length === 0, 'nothing is fetched from outside the daemon', outside.join('\n'));
} catch (e) {
	say(false, 'the browser run went to its end', e.stack || e);
} finally {
	if (ctx)
		await ctx.close();
	rmSync(profile, { recursive: true, force: true });
}
