// dashboard.mjs: drives Debian's chromium (through Debian's chromedriver, tests/lib/webdriver.mjs)
// through the stableq dashboard.
//
// node tests/lib/dashboard.mjs BASE_URL TOKEN PATCH_ID SHOT_DIR
// Prints one JSON object a line: {ok, name, diag?}; tests/7-dashboard/70-dashboard.t
// turns them into TAP and checks the results through the API.
import { join } from 'node:path';
import { Browser, request } from './webdriver.mjs';

const [base, token, patchId, shots] = process.argv.slice(2);
const say = (ok, name, diag) => console.log(JSON.stringify({ ok: !!ok, name, diag: diag === undefined ? undefined : String(diag) }));
const T = 15000;

let page;
try {
	page = await Browser.open({ width: 1280, height: 900, timeout: T });
	const get = async path => (await request('GET', base + '/api/v1' + path)).json();
	const api = get;

	// ---- the queue at 1280 px ----
	await page.goto(base + '/');
	await page.waitFor('table.patches tbody tr');
	const health = await get('/health');
	const list = await get('/patches?limit=100');
	const rows = await page.count('table.patches tbody tr');
	say(rows === list.patches.length, `the queue shows every patch (${rows} rows, ${list.total} patches)`);
	const subjects = await page.texts('table.patches .subject');
	say(list.patches.every(p => subjects.includes(p.subject)), 'each row shows its patch\'s subject from the API');
	const counts = {};
	for (const s of Object.keys(health.queue)) {
		const t = await page.textContent(`.counts a.st-${s} b`);
		counts[s] = Number(t);
	}
	say(Object.keys(health.queue).every(s => counts[s] === health.queue[s]),
		'the state counts match /health', JSON.stringify({ page: counts, api: health.queue }));
	const held = await page.count('tr.held');
	say(held === (health.queue.held || 0) && held > 0, `held fix-ups are highlighted (${held})`);
	const chips = await page.count('table.patches .chip');
	const goodChips = await page.count('table.patches .chip.good');
	const badChips = await page.count('table.patches .chip.bad, table.patches .chip.warn');
	say(chips > 0 && goodChips > 0 && badChips > 0, `verdicts are coloured per check (${goodChips} good, ${badChips} bad or unsure of ${chips})`);
	say(await page.count('.progress') === 1, 'the work in progress line is shown');
	const bar = await page.innerText('.progress .pbar[data-kind=build]').catch(e => String(e));
	say(bar.includes('building: 120/654 objects (18%)'), 'a build in progress shows its objects done of total', bar);
	await page.screenshot(join(shots, 'dashboard-queue-1280.png'));

	// filtering by state
	await page.click('.counts a.st-held');
	await page.waitFn(() => location.hash.includes('state=held'));
	await page.waitFor(['h1', { text: 'held' }]);
	const heldRows = await page.count('table.patches tbody tr');
	say(heldRows === health.queue.held, `the held filter shows the held patches (${heldRows})`);

	// ---- a patch page ----
	await page.goto(base + '/#/patch/' + patchId);
	await page.waitFor('table.verdicts');
	const p = await get('/patches/' + patchId);
	const vtext = await page.innerText('table.verdicts');
	const checks = Object.keys(p.verdicts);
	say(checks.length > 0 && checks.every(c => vtext.includes(c) && vtext.includes(p.verdicts[c].result) &&
		vtext.includes(p.verdicts[c].detail.slice(0, 40))),
		`the patch page shows its verdicts with their reasons (${checks.join(', ')})`, vtext.slice(0, 400));
	say((await page.innerText('h1')).includes(p.subject), 'the patch page shows its subject');
	say((await page.innerText(['.state', 0])) === p.state, `... and its state (${p.state})`);
	await page.screenshot(join(shots, 'dashboard-patch-1280.png'));

	// ---- flag it broken through the page ----
	await page.fill('#flag-form input[name=token]', 'f'.repeat(64));
	await page.fill('#flag-form textarea[name=reason]', 'oops: a wrong token');
	await page.click('#flag-button');
	await page.waitFor('#flag-form .msg.bad');
	const refused = await page.innerText('#flag-form .msg');
	say(refused.includes('403'), 'a wrong token is refused on the page', refused);
	await page.fill('#flag-form input[name=token]', token);
	await page.fill('#flag-form textarea[name=reason]', 'Flagged from the dashboard: breaks boot on my laptop');
	await page.click('#flag-button');
	await page.waitFn(() => {
		const s = document.querySelector('.state');
		return s && s.textContent === 'broken';
	});
	say(true, 'flagging through the page turns the patch broken on the page');
	const stored = await page.eval(() => localStorage.getItem('stableq.token'));
	say(stored === token, 'the token is kept in localStorage');
	await page.waitFor(['section', { has: ['h2', { text: 'Flags' }] }]);
	const flags = await page.innerText(['section', { has: ['h2', { text: 'Flags' }] }]);
	say(flags.includes('Flagged from the dashboard') && flags.includes('token:'), 'the flag and who set it are shown', flags);
	await page.screenshot(join(shots, 'dashboard-patch-flagged-1280.png'));

	// ---- what failed leads the patch and candidate pages ----
	const failCand = process.env.FAIL_CANDIDATE;
	await page.goto(base + '/#/patch/' + patchId);
	await page.waitFor('.failure');
	const leads = await page.eval(() => {
		const f = document.querySelector('.failure');
		const v = document.querySelector('table.verdicts');
		return !!(f && v && (f.compareDocumentPosition(v) & Node.DOCUMENT_POSITION_FOLLOWING));
	});
	say(leads, 'the patch page leads with what failed: the failing tests come before the verdicts');
	const blk = sel => ['.cand', { has: `a[href="#/candidate/${failCand}"]` }, sel];
	const failNames = await page.evalAll(blk('.failure'), els => els.map(e => e.dataset.test));
	say(JSON.stringify(failNames) === JSON.stringify(['kunit', 'kunit.cmdline.cmdline_test_tail_int', 'user-copy']),
		'the failing tests are listed, in the order they failed', JSON.stringify(failNames));
	const uc = await page.innerText(blk('.failure[data-test="user-copy"] pre')).catch(e => String(e));
	say(uc.includes('stale value 0x5a5a') && await page.visible(blk('.failure[data-test="user-copy"] pre')),
		'... each with its log excerpt, shown', uc);
	const suiteHead = await page.innerText(blk('.suite.failed[data-suite="kunit.cmdline"] .suite-head')).catch(e => String(e));
	say(suiteHead.includes('kunit.cmdline') && suiteHead.includes('1 of 8 cases failed'),
		'a failing KUnit case is shown under its suite', suiteHead);
	const passedSummary = await page.innerText(blk('details.passed > summary')).catch(e => String(e));
	say(passedSummary.trim() === '92 passed', 'the passing tests are folded into a count', passedSummary);
	say(!(await page.visible(blk('details.passed table'))), '... and no passing test is listed until asked');
	const topFail = await page.box([...blk('.failure'), 0]);
	const topSummary = await page.box(blk('details.passed > summary'));
	say(topFail && topSummary && topFail.y < topSummary.y, 'failures come before the count of passes');
	await page.screenshot(join(shots, 'dashboard-patch-failed-1280.png'));
	await page.click(blk('details.passed > summary'));
	const passRows = await page.count(blk('details.passed tbody tr'));
	const listRow = await page.innerText(blk('details.passed tr[data-suite="kunit.list"]')).catch(e => String(e));
	say(passRows === 8 && listRow.includes('40 cases'),
		`opened, the passes are grouped: KUnit cases by suite (${passRows} rows)`, listRow.slice(0, 200));
	// a redraw (the poll's, on a new event) keeps open what the user opened
	await page.evalAll(blk('details.passed'), els => els.forEach(e => { e.dataset.drawn = 'before'; }));
	await page.eval(() => window.dispatchEvent(new HashChangeEvent('hashchange')));
	await page.waitFn(chain => { const d = resolve(chain); return d.length === 1 && !d[0].dataset.drawn; },
		[blk('details.passed')], { what: 'the patch page drawn again' });
	say(await page.visible(blk('details.passed table')), 'a redraw of the page keeps the opened passes open');

	await page.goto(base + '/#/candidate/' + failCand);
	await page.waitFor('.failure');
	const summ = await page.innerText('.summary').catch(async e =>
		String(e) + '\npage: ' + await page.innerText('#view').catch(() => '') + '\napi: ' +
		JSON.stringify(await api('/candidates/' + failCand)).slice(0, 600));
	say(summ.startsWith(`candidate ${failCand}: fail: kunit, kunit.cmdline.cmdline_test_tail_int, user-copy`),
		'the candidate page says what it found in one line', summ);
	const cFirst = await page.attr(['.cand > *:not(.line)', 0], 'class');
	say(cFirst === 'results' && await page.count('.results > .failures') === 1 &&
		(await page.attr(['.results > *', 0], 'class')) === 'failures',
		'the candidate page leads with its failures', cFirst);
	const phases = await page.innerText('.cand .phases').catch(e => String(e));
	say(phases.includes('apply 0.4 s') && phases.includes('build 4 min 3 s (built)') &&
		phases.includes('retry 35 s (1 boot, 1 test)'),
		'the candidate page says each phase with its time', phases);
	await page.screenshot(join(shots, 'dashboard-candidate-failed-1280.png'));

	// ---- the other pages ----
	for (const [hash, sel, name] of [
		['#/candidates', ['h1', { text: 'Candidates' }], 'candidates'],
		['#/bisections', ['h1', { text: 'Bisections' }], 'bisections'],
		['#/reverts', ['h1', { text: 'Reverts' }], 'reverts'],
		['#/mail', ['h1', { text: 'Mail outbox' }], 'mail'],
		['#/events', ['h1', { text: 'Events' }], 'events'],
	]) {
		await page.goto(base + '/' + hash);
		await page.waitFor(sel);
		const n = await page.count('#view tbody tr');
		say(n > 0, `the ${name} page lists its rows (${n})`);
		if (name === 'bisections' || name === 'mail' || name === 'reverts')
			await page.screenshot(join(shots, `dashboard-${name}-1280.png`));
	}
	const bis = await get('/bisections');
	if (bis.bisections.length) {
		await page.goto(base + '/#/bisection/' + bis.bisections[0].id);
		await page.waitFor('.bar .cell');
		const steps = await page.count('#view tbody tr');
		const b = await get('/bisections/' + bis.bisections[0].id);
		say(steps === b.steps.length, `the bisection page shows its steps (${steps})`);
		await page.screenshot(join(shots, 'dashboard-bisection-1280.png'));
	} else {
		say(false, 'a bisection to show');
	}

	// ---- refreshes by itself ----
	await page.goto(base + '/');
	await page.waitFor('table.patches tbody tr');
	const before = await page.count('table.patches tbody tr');
	const r = await request('POST', base + '/api/v1/patches', {
		headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'text/plain' },
		data: process.env.EXTRA_PATCH,
	});
	say(r.status === 201, 'a patch imported while the page is open');
	await page.waitFn(n => document.querySelectorAll('table.patches tbody tr').length === n + 1, [before]);
	say(true, 'the queue page shows it without a reload');

	// ---- two branches: the panel, the selector, the fix x branch matrix ----
	await page.goto(base + '/');
	await page.waitFor('#branches tr[data-branch]');
	const brs = (await api('/branches')).branches;
	const panel = {};
	for (const b of brs)
		panel[b.key] = await page.innerText(`#branches tr[data-branch="${b.key}"] .waits`).catch(e => String(e));
	say(brs.length === 2 && brs.every(b => panel[b.key] === b.waits_for),
		'the branches panel says what each branch waits for, as GET /branches', JSON.stringify({ panel, api: brs.map(b => b.waits_for) }));
	const opts = await page.evalAll('#branch option', os => os.map(o => o.value || 'all'));
	say(JSON.stringify(opts) === JSON.stringify(['all', '6.1', '6.12']), 'the header\'s branch selector: all, 6.1, 6.12', JSON.stringify(opts));

	await page.select('#branch', '6.12');
	await page.waitFor(['h1', { text: 'Queue 6.12' }]);
	const l612 = await api('/patches?branch=6.12&limit=100');
	const tags = await page.texts('table.patches .branch-tag');
	say(l612.total > 0 && tags.length === l612.patches.length && tags.every(x => x === '6.12'),
		`6.12 selected: the queue shows 6.12's patches only (${tags.length} of ${l612.total})`, JSON.stringify(tags));
	const b612 = brs.find(b => b.key === '6.12');
	const c612 = {};
	for (const st of Object.keys(b612.patches))
		c612[st] = Number(await page.textContent(`.counts a.st-${st} b`));
	say(Object.keys(b612.patches).every(st => c612[st] === b612.patches[st]),
		'... and the counts are 6.12\'s', JSON.stringify({ page: c612, api: b612.patches }));
	say(await page.count('#branches tr.on[data-branch="6.12"]') === 1, '... its row of the panel is marked');
	await page.screenshot(join(shots, 'dashboard-queue-6.12-1280.png'));
	for (const [hash, sel, path, key] of [
		['#/candidates', ['h1', { text: 'Candidates 6.12' }], '/candidates?limit=100&branch=6.12', 'candidates'],
		['#/bisections', ['h1', { text: 'Bisections 6.12' }], '/bisections?limit=100&branch=6.12', 'bisections'],
		['#/reverts', ['h1', { text: 'Reverts 6.12' }], '/reverts?branch=6.12', 'reverts'],
	]) {
		await page.goto(base + '/' + hash);
		await page.waitFor(sel);
		const want = (await api(path))[key].length;
		const shown = await page.count('#view tbody tr');
		const keys = await page.texts('#view tbody .branch-tag');
		say(shown === want && keys.every(x => x === '6.12'), `the ${key} page keeps to 6.12 (${shown} of ${want})`, JSON.stringify(keys));
	}

	await page.goto(base + '/#/fixes');
	await page.waitFor(['h1', { text: 'Fixes by branch' }]);
	const mFix = await api('/fixes?branch=6.12&limit=100');
	say(await page.count('table.fixes tbody tr') === mFix.fixes.length,
		`the matrix keeps to the fixes on 6.12 (${mFix.fixes.length})`);
	await page.select('#branch', '');
	await page.waitFn(() => !document.querySelector('h1').textContent.includes(' on '));
	const m = await api('/fixes?limit=100');
	const heads = await page.texts('table.fixes thead th');
	say(JSON.stringify(heads) === JSON.stringify(['Fix', '6.1', '6.12']), 'all branches: the matrix has a column per branch', JSON.stringify(heads));
	say(await page.count('table.fixes tbody tr') === m.fixes.length, `... and a row per fix (${m.fixes.length})`);
	const both = m.fixes.find(f => f.subject === process.env.BOTH_SUBJECT);
	say(both && both.branches['6.1'] && both.branches['6.12'], 'the fix queued for both branches is one fix', JSON.stringify(both));
	if (both) {
		const rowB = `table.fixes tr[data-fix="${both.fix}"]`;
		const cells = await page.evalAll([rowB, 'td.b-cell'], tds => tds.map(td => {
			const a = td.querySelector('a[href^="#/patch/"]'), st = td.querySelector('.state');
			return { link: a && a.getAttribute('href'), state: st && st.textContent, chips: td.querySelectorAll('.chip').length };
		}));
		say(cells.length === 2 && ['6.1', '6.12'].every((k, i) => cells[i].link === '#/patch/' + both.branches[k].id &&
			cells[i].state === both.branches[k].state && cells[i].chips === Object.keys(both.branches[k].verdicts).length),
		'... each cell: its branch\'s patch (a link), its state and a chip per check', JSON.stringify(cells));
		const notPresent = await page.evalAll([rowB, 'td.b-cell'], tds => tds.map(td => td.innerText.includes('bug not present')));
		say(JSON.stringify(notPresent) === '[false,true]' && both.branches['6.12'].checks.test === 'not-present',
			'... its 6.12 copy, whose own test passed without it, says "bug not present"; the 6.1 one does not', JSON.stringify(notPresent));
		await page.click([rowB, 'td.b-cell', 1, 'a[href^="#/patch/"]']);
		await page.waitFor('table.verdicts');
		const url = await page.currentUrl();
		say(url.includes('#/patch/' + both.branches['6.12'].id), 'a cell leads to its patch page', url);
		const meta = await page.innerText('dl.meta');
		say(meta.includes('6.12'), '... which names its branch (6.12)', meta.slice(0, 300));
		await page.goto(base + '/#/fixes');
		await page.waitFor('table.fixes');
	}
	const only = m.fixes.find(f => f.subject === process.env.HOSTILE_SUBJECT);
	say(only && only.branches['6.1'] === null, 'a fix only for 6.12 has no patch on 6.1', JSON.stringify(only));
	if (only) {
		const cell61 = await page.innerText([`table.fixes tr[data-fix="${only.fix}"] td.b-cell`, 0]);
		say(cell61.includes('not queued'), '... its 6.1 cell says "not queued"', cell61);
		const subj = await page.innerText(`table.fixes tr[data-fix="${only.fix}"] .subject`);
		say(subj === process.env.HOSTILE_SUBJECT && await page.count('#view img') === 0,
			'a subject with markup is shown as text, never as markup', subj);
	}
	await page.screenshot(join(shots, 'dashboard-fixes-1280.png'));
	await page.setViewport(375, 800);
	await page.goto(base + '/#/fixes');
	await page.waitFor('table.fixes tbody tr');
	const wideFix = await page.eval(() => document.documentElement.scrollWidth);
	say(wideFix <= 375, `at 375 px the matrix needs no sideways scrolling (${wideFix} px wide)`);
	const cellLabel = await page.eval(() => getComputedStyle(document.querySelector('table.fixes td.b-cell'), '::before').content);
	say(cellLabel === '"6.1"', 'at 375 px each cell is labelled with its branch', cellLabel);
	await page.screenshot(join(shots, 'dashboard-fixes-375.png'));
	await page.setViewport(1280, 900);

	// ---- a phone ----
	await page.setViewport(375, 800);
	await page.goto(base + '/');
	await page.waitFor('table.patches tbody tr');
	const wide = await page.eval(() => document.documentElement.scrollWidth);
	say(wide <= 375, `at 375 px the queue needs no sideways scrolling (${wide} px wide)`);
	const cardish = await page.eval(() => getComputedStyle(document.querySelector('table.patches tbody tr')).display);
	say(cardish === 'block', 'at 375 px rows become cards');
	await page.screenshot(join(shots, 'dashboard-queue-375.png'));
	await page.goto(base + '/#/patch/' + patchId);
	await page.waitFor('table.verdicts');
	const wide2 = await page.eval(() => document.documentElement.scrollWidth);
	say(wide2 <= 375, `at 375 px the patch page needs no sideways scrolling (${wide2} px wide)`);
	await page.screenshot(join(shots, 'dashboard-patch-375.png'));

	const errors = await page.errors();
	say(errors.length === 0, 'no JavaScript errors', errors.join('\n'));
	// every response of 400 or more failed, but the flag with the wrong token
	const seen = await page.responses();
	say(seen.some(r => r.status === 403 && r.method === 'POST' && r.url === `${base}/api/v1/patches/${patchId}/flag`) &&
		seen.some(r => r.status === 200 && r.url.startsWith(base + '/api/v1/patches')),
		`the browser's log holds the page's responses (${seen.length}), the refused flag among them`);
	const failed = seen.filter(r => r.status >= 400 &&
		!(r.status === 403 && r.method === 'POST' && r.url.endsWith('/flag'))).map(r => r.status + ' ' + r.method + ' ' + r.url);
	say(failed.length === 0, 'no request failed (but the one with the wrong token)', failed.join('\n'));
	const outside = (await page.requested()).filter(u => !u.startsWith(base) && !u.startsWith('data:'));
	say(outside.length === 0, 'nothing is fetched from outside the daemon', outside.join('\n'));
} catch (e) {
	say(false, 'the browser run went to its end', e.stack || e);
} finally {
	if (page)
		await page.close();
}
