/* app.js: the stableq dashboard: hash routes, views rendered from /api/v1, polling while work runs. */
'use strict';

const API = 'api/v1';
const TOKEN_KEY = 'stableq.token';
const BRANCH_KEY = 'stableq.branch';
const POLL_MS = 3000;
const STATES = ['imported', 'checked', 'queued', 'held', 'rejected', 'broken',
	'dropped', 'released', 'reverted'];
const PAGE = 100;

/* ---- small helpers ---- */

/* h('a', {href: '#/'}, 'text', child...): DOM without innerHTML, so data is never markup. */
function h(tag, attrs, ...kids) {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === undefined || v === null || v === false)
			continue;
		if (k === 'class')
			el.className = v;
		else if (k.startsWith('on'))
			el.addEventListener(k.slice(2), v);
		else
			el.setAttribute(k, v === true ? '' : String(v));
	}
	for (const kid of kids.flat(Infinity)) {
		if (kid === undefined || kid === null || kid === false)
			continue;
		el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
	}
	return el;
}

function token() {
	try {
		return localStorage.getItem(TOKEN_KEY) || '';
	} catch (e) {
		return '';
	}
}

function setToken(t) {
	try {
		if (t)
			localStorage.setItem(TOKEN_KEY, t);
		else
			localStorage.removeItem(TOKEN_KEY);
	} catch (e) { /* private mode: the token lives in the form only */ }
}

class ApiError extends Error {
	constructor(status, body) {
		super(body && body.message ? body.message : 'HTTP ' + status);
		this.status = status;
		this.code = body && body.error;
	}
}

async function get(path) {
	const r = await fetch(API + path, { headers: { Accept: 'application/json' } });
	const body = await r.json().catch(() => null);
	if (!r.ok)
		throw new ApiError(r.status, body);
	return body;
}

async function post(path, data, tok) {
	const r = await fetch(API + path, {
		method: 'POST',
		headers: {
			'Content-Type': 'application/json',
			Authorization: 'Bearer ' + tok,
		},
		body: JSON.stringify(data),
	});
	const body = await r.json().catch(() => null);
	if (!r.ok)
		throw new ApiError(r.status, body);
	return body;
}

/* ---- branches: the selector, the panel ---- */

/* GET /branches as last read (each render reads it again). */
let branches = [];

/* The branch chosen in the header ('' for all), if the store knows it. */
function selectedBranch() {
	let k = '';
	try {
		k = localStorage.getItem(BRANCH_KEY) || '';
	} catch (e) { /* private mode: all branches */ }
	return branches.some(b => b.key === k) ? k : '';
}

function setSelectedBranch(k) {
	try {
		if (k)
			localStorage.setItem(BRANCH_KEY, k);
		else
			localStorage.removeItem(BRANCH_KEY);
	} catch (e) { /* private mode */ }
}

/* path with the chosen branch as ?branch= (nothing for all). */
function onBranch(path) {
	const k = selectedBranch();
	return k ? path + (path.includes('?') ? '&' : '?') + 'branch=' + encodeURIComponent(k) : path;
}

/* Reads /branches and fills the header's selector with their keys. */
async function loadBranches() {
	branches = (await get('/branches')).branches || [];
	const sel = document.getElementById('branch');
	const k = selectedBranch();
	const want = ['', ...branches.map(b => b.key)];
	if ([...sel.options].map(o => o.value).join('\n') !== want.join('\n'))
		sel.replaceChildren(...want.map(v => h('option', { value: v }, v || 'all')));
	sel.value = k;
}

/* A list's branch column, shown when there is more than one branch. */
function branchCol(key) {
	return branches.length > 1 ? [['Branch', h('span', { class: 'branch-tag' }, key || '?')]] : [];
}

function branchHead() {
	return branches.length > 1 ? ['Branch'] : [];
}

/* What each branch is at and waits for: the daemon runs one step at a time for all. */
function branchPanel() {
	if (!branches.length)
		return null;
	const k = selectedBranch();
	return h('section', { class: 'card branches', id: 'branches' }, h('h2', {}, 'Branches'),
		table(['Branch', 'Queue', 'Latest candidate', 'Waits for'], branches.map(b => {
			const n = b.patches || {};
			const lc = b.latest_candidate;
			return row([
				['Branch', h('div', {},
					h('b', { class: 'branch-key' }, b.key), ' ',
					h('span', { class: 'muted' }, b.git_branch + (b.version ? ' · ' + b.version : '')))],
				['Queue', h('span', { class: 'chips' },
					['queued', 'held', 'checked', 'broken', 'released'].filter(s => n[s]).map(s =>
						h('span', { class: 'state st-' + s }, n[s] + ' ' + s)),
					Object.values(n).some(Boolean) ? null : h('span', { class: 'muted' }, 'empty'))],
				['Latest candidate', lc ? h('span', {},
					h('a', { href: '#/candidate/' + lc.id }, 'candidate #' + lc.id), ' ',
					lc.verdict ? badge(lc.verdict) : badge(lc.step === 'pending' ? 'pending' : 'running')) :
					h('span', { class: 'muted' }, 'none yet')],
				['Waits for', h('div', {},
					b.doing ? h('div', { class: 'doing' }, b.doing) : null,
					h('div', { class: 'waits' + (b.waits_for === 'nothing' ? ' muted' : '') }, b.waits_for))],
			], { 'data-branch': b.key, class: b.key === k ? 'on' : '' });
		}), 'branch-list'));
}

/* Verdict results and states, by how they should look. */
const GOOD = ['present', 'clean', 'ok', 'none', 'pass', 'overridden', 'found',
	'done', 'confirmed', 'sent', 'good', 'already-applied'];
const BAD = ['absent', 'conflict', 'held', 'fail', 'build-failed', 'apply-failed',
	'hang', 'failed', 'invalid', 'bad', 'broken', 'regression'];
const WARN = ['added', 'not-built', 'unknown', 'missing', 'flaky', 'known', 'queued-mail',
	'running', 'planned', 'applying', 'sending', 'pending'];

function tone(result) {
	if (GOOD.includes(result))
		return 'good';
	if (BAD.includes(result))
		return 'bad';
	if (WARN.includes(result))
		return 'warn';
	return 'info';
}

/* "2026-12-03T08:14:35.242" -> "12-03 08:14:35": short enough for a column. */
function when(ts) {
	const m = /^\d{4}-(\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(ts || '');
	return m ? m[1] + ' ' + m[2] : (ts || '');
}

/* Mail waiting is not a problem: queued mail is amber, not red. */
function mailBadge(state) {
	return badge(state, state === 'queued' ? 'warn' : null);
}

function badge(text, cls) {
	return h('span', { class: 'badge ' + (cls || tone(text)) }, text);
}

function stateBadge(state) {
	return h('span', { class: 'state st-' + state }, state);
}

/* checks: {check: result} of a list's patch summary (the reasons are on its page). */
function verdictChips(checks) {
	const names = Object.keys(checks || {});
	if (!names.length)
		return h('span', { class: 'muted' }, 'not checked');
	return h('span', { class: 'chips' }, names.map(n => {
		const r = checks[n];
		return h('span', {
			class: 'chip ' + (n === 'flags' && r !== 'none' ? 'info' : tone(r)),
			title: n + ': ' + r,
		}, h('b', {}, n), ' ', r);
	}));
}

function ago(ts) {
	if (!ts)
		return '';
	const t = Date.parse(ts.endsWith('Z') ? ts : ts + 'Z');
	if (isNaN(t))
		return ts;
	const s = Math.round((Date.now() - t) / 1000);
	if (s < 60)
		return s + ' s ago';
	if (s < 3600)
		return Math.round(s / 60) + ' min ago';
	if (s < 86400)
		return Math.round(s / 3600) + ' h ago';
	return ts.slice(0, 10);
}

function section(title, ...kids) {
	return h('section', { class: 'card' }, h('h2', {}, title), kids);
}

function table(head, rows, cls) {
	return h('div', { class: 'scroll' },
		h('table', { class: cls || '' },
			h('thead', {}, h('tr', {}, head.map(c => h('th', {}, c)))),
			h('tbody', {}, rows)));
}

/* A row whose cells carry their column name, for the card layout on phones. */
function row(cells, attrs) {
	return h('tr', attrs || {}, cells.map(([label, v, cls]) =>
		h('td', { 'data-label': label, class: cls || '' }, v)));
}

function pre(text, cls) {
	return h('pre', { class: cls || 'log' }, text);
}

function patchLink(id, text) {
	return h('a', { href: '#/patch/' + id }, text || '#' + id);
}

/* ---- views ---- */

const views = {};

/* A form's token, remembered; null when there is none (msg says so). */
function formToken(tok, msg) {
	const t = tok.value.trim();
	if (!t) {
		msg.textContent = 'A token is needed: stableq token add NAME';
		msg.className = 'msg bad';
		return null;
	}
	setToken(t);
	return t;
}

/* The bulk-mail guard: mail of a step that would reach too many people
 * waits; the page says so and a maintainer with a token releases it. */
function heldNotice(mail) {
	const held = (mail || []).filter(m => m.hold);
	if (!held.length)
		return null;
	const msg = h('span', { class: 'msg' });
	const tok = h('input', { type: 'password', name: 'token', autocomplete: 'off', value: token(), placeholder: 'API token', required: true });
	async function release(ev) {
		ev.preventDefault();
		const t = formToken(tok, msg);
		if (!t)
			return;
		try {
			const r = await post('/mail/release', {}, t);
			msg.className = 'msg good';
			msg.textContent = r.released + ' released.';
			render(true);
		} catch (e) {
			msg.className = 'msg bad';
			msg.textContent = (e.status ? e.status + ': ' : '') + e.message;
		}
	}
	return h('form', { class: 'act held-mail', id: 'held-mail', onsubmit: release },
		h('p', {}, h('strong', {}, held.length + ' mail' + (held.length === 1 ? '' : 's') +
			' held by the bulk-mail guard'), ': ', held[0].hold, '. ',
			h('a', { href: '#/mail' }, 'See them'), '.'),
		tok, h('button', { type: 'submit', id: 'release-mail' }, 'Release the mail'), msg);
}

views.queue = async (args) => {
	const state = args.state || '';
	const offset = Number(args.offset || 0);
	const q = new URLSearchParams({ limit: PAGE, offset });
	if (state)
		q.set('state', state);
	const [list, health, queued] = await Promise.all([get(onBranch('/patches?' + q)), get('/health'),
		get('/mail?state=queued&limit=1000')]);
	const sel = branches.find(b => b.key === selectedBranch());
	const counts = (sel ? sel.patches : health.queue) || {};
	const total = STATES.reduce((a, s) => a + (counts[s] || 0), 0);
	const chips = h('div', { class: 'counts' },
		h('a', { href: '#/', class: 'count' + (state ? '' : ' on') },
			h('b', {}, total), ' all'),
		STATES.map(s => h('a', {
			href: '#/?state=' + s,
			class: 'count st-' + s + (state === s ? ' on' : '') + (counts[s] ? '' : ' zero'),
		}, h('b', {}, counts[s] || 0), ' ' + s)));

	const rows = list.patches.map(p => row([
		['#', patchLink(p.id)],
		['Patch', h('div', {},
			h('a', { href: '#/patch/' + p.id, class: 'subject' }, p.subject),
			h('div', { class: 'sub' }, h('span', { class: 'pid' }, '#' + p.id + ' · '),
				branches.length > 1 ? [h('span', { class: 'branch-tag' }, p.branch || '?'), ' '] : null,
				p.author_name || p.author_email || '',
				p.upstream ? ' · ' + p.upstream.slice(0, 12) : ''),
			p.state === 'held' ? h('div', { class: 'why' }, p.state_reason || 'a fix-up of a broken patch') : null)],
		['State', stateBadge(p.state)],
		['Checks', verdictChips(p.checks)],
	], { class: p.state === 'held' ? 'held' : '' }));

	const pager = h('div', { class: 'pager' },
		offset > 0 ? h('a', { href: '#/?' + new URLSearchParams({ state, offset: Math.max(0, offset - PAGE) }) }, '← newer') : null,
		h('span', { class: 'muted' }, list.total ? `${offset + 1}–${offset + list.patches.length} of ${list.total}` : 'no patches'),
		offset + PAGE < list.total ? h('a', { href: '#/?' + new URLSearchParams({ state, offset: offset + PAGE }) }, 'older →') : null);

	return [
		h('h1', {}, 'Queue', sel ? ' ' + sel.key : '', state ? ' · ' + state : ''),
		heldNotice(queued.mail),
		progress(health),
		branchPanel(),
		chips,
		list.patches.length ? table(['#', 'Patch', 'State', 'Checks'], rows, 'patches') :
			h('p', { class: 'empty' }, state ? 'No patch is ' + state + '.' : 'The queue is empty: import patches with `stableq import` or POST /api/v1/patches.'),
		pager,
	];
};

/* What a bisection knows: the longest prefix known to pass (-1: none yet), the shortest known to fail. */
function range(b) {
	return `good ≤ ${b.good === null || b.good < 0 ? '?' : b.good}, bad ≥ ${b.bad === null ? '?' : b.bad}`;
}

/* "4.2 s", "38 s", "4 min 3 s", "1 h 2 min" (candidate_duration_text()). */
function duration(s) {
	if (s === null || s === undefined || s < 0)
		return '?';
	if (s < 10)
		return s.toFixed(1) + ' s';
	const t = Math.round(s);
	if (t < 60)
		return t + ' s';
	if (t < 3600)
		return Math.floor(t / 60) + ' min' + (t % 60 ? ' ' + (t % 60) + ' s' : '');
	return Math.floor(t / 3600) + ' h ' + Math.floor((t % 3600) / 60) + ' min';
}

/*
 * A candidate's phases: each done one with its time, the running one with
 * its time so far and the branch's usual, those to come with the usual,
 * and what is left: "apply 0.1 s · build 4 min 3 s · boot 12 s of ~20 s ·
 * tests ~1 min · about 1 min 8 s left".
 */
function phaseLine(phases, left) {
	if (!(phases || []).length)
		return null;
	const parts = phases.map(p => {
		const est = p.estimate !== null && p.estimate !== undefined ? '~' + duration(p.estimate) : '';
		if (p.running)
			return h('span', { class: 'phase running', 'data-phase': p.phase },
				h('b', {}, p.phase), ' ' + duration(p.elapsed) + (est ? ' of ' + est : ''));
		if (p.seconds !== null && p.seconds !== undefined)
			return h('span', { class: 'phase done', 'data-phase': p.phase },
				p.phase + ' ' + duration(p.seconds) + (p.detail ? ' (' + p.detail + ')' : ''));
		return h('span', { class: 'phase todo muted', 'data-phase': p.phase }, p.phase + (est ? ' ' + est : ''));
	});
	const out = [];
	parts.forEach((x, i) => out.push(i ? ' · ' : '', x));
	if (left !== null && left !== undefined)
		out.push(h('span', { class: 'phase-left' }, ' · about ' + duration(left) + ' left'));
	return h('div', { class: 'line phases' }, ...out);
}

/* The work in progress: the daemon's step, the candidate and the bisection. */
function progress(health) {
	const c = health.candidate, b = health.bisection;
	const busy = health.step && health.step !== 'idle';
	return h('div', { class: 'progress' + (busy ? ' busy' : '') },
		h('span', { class: 'dot' }),
		h('span', {}, busy ? 'Working: ' + health.step : 'Idle'),
		c ? h('span', {}, ' · ', h('a', { href: '#/candidate/' + c.id }, 'candidate #' + c.id),
			' (' + c.purpose + ', ' + c.patches + ' patches) at step ', h('b', {}, c.step)) : null,
		b ? h('span', {}, ' · ', h('a', { href: '#/bisection/' + b.id }, 'bisection #' + b.id),
			' ' + range(b) + `, ${b.builds_used} builds`) : null,
		health.pending_candidates ? h('span', {}, ' · ' + health.pending_candidates + ' pending') : null,
		c ? phaseLine(c.phases, c.estimate_left) : null,
		(health.progress || []).length ? h('div', { class: 'bars' }, health.progress.map(progressBar)) : null);
}

views.patch = async (args) => {
	const p = await get('/patches/' + args.id);
	const out = [];
	out.push(h('h1', {}, h('span', { class: 'muted' }, '#' + p.id + ' '), p.subject));
	out.push(h('div', { class: 'line' }, stateBadge(p.state),
		p.state_reason ? h('span', { class: 'why' }, ' ' + p.state_reason) : null));

	/* what failed leads the page: the flags with their evidence, the failing candidates */
	const cands = p.candidates || [];
	const lead = cands.some(failed) || (p.flags || []).length;
	const flagsSection = (p.flags || []).length ? section('Flags', table(['By', 'Reason', 'Evidence', 'When'], p.flags.map(f => row([
		['By', f.actor], ['Reason', f.reason],
		['Evidence', [f.evidence ? pre(f.evidence) : null,
			f.build_id ? h('a', { href: API + '/builds/' + f.build_id + '/log' }, 'build log') : null,
			f.bisection_id ? h('a', { href: '#/bisection/' + f.bisection_id }, ' bisection #' + f.bisection_id) : null]],
		['When', ago(f.created_at)]])))) : null;
	const buildsSection = section('Builds and tests', cands.length ?
		[...cands.filter(failed), ...cands.filter(c => !failed(c))].map(candidateBlock) :
		h('p', { class: 'muted' }, 'No candidate has included this patch yet.'));
	if (lead)
		out.push(flagsSection, buildsSection);

	const meta = [
		['Author', [p.author_name, p.author_email ? '<' + p.author_email + '>' : ''].filter(Boolean).join(' ')],
		['Date', p.date],
		['Message-Id', p.message_id],
		['Branch', p.branch ? h('span', {}, h('span', { class: 'branch-tag' }, p.branch), ' ',
			h('a', { href: '#/fixes' }, 'the fix on every branch')) : null],
		['Upstream', p.upstream],
		['Fixes', (p.fixes || []).join(', ')],
		['Stable', (p.stable_versions || []).join(', ')],
		['Stable-dep-of', (p.stable_dep_of || []).join(', ')],
		['Released as', p.released_commit],
		['Depends on', (p.depends_on || []).map(d => [patchLink(d.id), ' (' + d.kind + ') '])],
		['Goes with it', (p.dependents || []).map(d => [patchLink(d.id), ' (' + d.kind + ') '])],
		['Files', (p.files || []).map(f => h('code', { class: 'file' }, f.change + ' ' + f.path))],
	].filter(([, v]) => v && (!Array.isArray(v) || v.length));
	out.push(section('Patch', h('dl', { class: 'meta' }, meta.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))));

	const vnames = Object.keys(p.verdicts || {});
	out.push(section('Verdicts',
		vnames.length ? table(['Check', 'Result', 'Reason', 'When'], vnames.map(n => row([
			['Check', h('b', {}, n)],
			['Result', badge(p.verdicts[n].result, n === 'flags' && p.verdicts[n].result !== 'none' ? 'info' : null)],
			['Reason', p.verdicts[n].detail],
			['When', ago(p.verdicts[n].at)],
		])), 'verdicts') : h('p', { class: 'muted' }, 'Not checked yet.'),
		(p.verdict_history || []).length > vnames.length ?
			h('details', {}, h('summary', {}, 'History (' + p.verdict_history.length + ')'),
				table(['Check', 'Result', 'Reason', 'When'], p.verdict_history.map(v => row([
					['Check', v.check], ['Result', badge(v.result)], ['Reason', v.detail], ['When', when(v.at)]])))) : null));

	if (!lead)
		out.push(flagsSection, buildsSection);

	if (p.coverage)
		out.push(section('Build coverage', h('div', { class: 'line' }, badge(p.coverage.status,
			p.coverage.status === 'booted' || p.coverage.status === 'compiled' ? 'good' : null),
			' in ', h('a', { href: '#/candidate/' + p.coverage.candidate_id }, 'candidate #' + p.coverage.candidate_id)),
			coverageFiles(p.coverage.files), linesLine(p.coverage.lines)));


	if ((p.reverts || []).length)
		out.push(section('Reverts', table(['Revert', 'Action', 'Why', 'State', 'Commit'], p.reverts.map(r => row([
			['Revert', h('a', { href: '#/revert/' + r.id }, '#' + r.id)], ['Action', r.action], ['Why', r.why],
			['State', badge(r.state)], ['Commit', r.revert_commit ? h('code', {}, r.revert_commit.slice(0, 12)) : '']])))));

	if ((p.mail || []).length)
		out.push(section('Mail to the author', table(['Mail', 'Kind', 'State', 'Attempts', 'Error'], p.mail.map(m => row([
			['Mail', '#' + m.id], ['Kind', m.kind], ['State', mailBadge(m.state)],
			['Attempts', m.attempts], ['Error', m.last_error || '']])))));

	out.push(section('Act', actions(p)));

	out.push(h('details', { class: 'card' }, h('summary', {}, 'Message and diff'),
		pre(p.message || '', 'msg'), pre(p.diff || '', 'diff')));

	out.push(section('Events', table(['When', 'Who', 'What'], (p.events || []).slice().reverse().map(e => row([
		['When', when(e.at)], ['Who', e.actor], ['What', e.kind + (e.detail ? ': ' + e.detail : '')]])), 'events')));
	return out;
};

/* A test's result over the runs of one candidate: mixed runs are flaky. */
function byName(tests) {
	const m = new Map();
	for (const t of tests || []) {
		let e = m.get(t.name);
		if (!e)
			m.set(t.name, e = { name: t.name, results: [], detail: '', log_excerpt: '' });
		e.results.push(t.result);
		if (t.result !== 'pass') {
			e.detail = e.detail || t.detail || '';
			e.log_excerpt = e.log_excerpt || t.log_excerpt || '';
		}
	}
	for (const e of m.values()) {
		const r = new Set(e.results);
		e.result = r.has('flaky') || (r.has('fail') && r.has('pass')) ? 'flaky' :
			r.has('fail') ? 'fail' : r.has('pass') ? 'pass' : 'skip';
	}
	return [...m.values()];
}

/* KUnit cases ("kunit.cmdline.case") belong to their suite ("kunit.cmdline"). */
function suiteOf(name) {
	const m = /^(kunit\.[^.]+)(\.|$)/.exec(name);
	return m ? m[1] : null;
}

/* [[group, [tests]]] in first-seen order; tests outside a suite are their own group. */
function grouped(tests) {
	const g = new Map();
	for (const t of tests) {
		const k = suiteOf(t.name) || t.name;
		if (!g.has(k))
			g.set(k, []);
		g.get(k).push(t);
	}
	return [...g.entries()];
}

function caseName(t, suite) {
	return suite && t.name.startsWith(suite + '.') ? t.name.slice(suite.length + 1) : t.name;
}

/*
 * What failed first, with the log excerpt; what passed folded into a count
 * ("96 passed"), KUnit cases grouped by suite.
 */
const STANDING_RANK = { regression: 0, flaky: 1, known: 2 };
const STANDING_HEAD = { regression: ['regression', 'regressions'], flaky: ['flaky test', 'flaky tests'],
	known: ['known failure (fails on the branch tip too)', 'known failures (they fail on the branch tip too)'] };

function testResults(tests, standing) {
	const all = byName(tests);
	/* against the tip: regressions lead, then flaky tests, then known failures */
	const stand = t => (standing || {})[t.name] || (t.result === 'flaky' ? 'flaky' : 'regression');
	const bad = all.filter(t => t.result === 'fail' || t.result === 'flaky')
		.map(t => ({ ...t, standing: stand(t) }))
		.sort((a, b) => STANDING_RANK[a.standing] - STANDING_RANK[b.standing]);
	const good = all.filter(t => t.result === 'pass');
	const skipped = all.filter(t => t.result === 'skip');
	const failuresOf = list => grouped(list).map(([group, ts]) => {
		const suite = suiteOf(group) && ts.some(t => t.name !== group) ? group : null;
		const one = t => h('div', { class: 'failure', 'data-test': t.name },
			h('div', { class: 'line' }, badge(standing ? t.standing : t.result), ' ', h('b', { class: 'tname' }, suite ? caseName(t, suite) : t.name),
				t.results.length > 1 ? h('span', { class: 'muted' }, ' (' + t.results.join(', ') + ')') : null,
				t.detail ? h('span', { class: 'why' }, ' ' + t.detail) : null),
			t.log_excerpt ? pre(t.log_excerpt) : null);
		if (!suite)
			return ts.map(one);
		const total = all.filter(t => suiteOf(t.name) === suite && t.name !== suite).length;
		return h('div', { class: 'suite failed', 'data-suite': suite },
			h('div', { class: 'suite-head' }, h('b', {}, suite), ' ',
				h('span', { class: 'muted' }, ts.filter(t => t.name !== suite).length + ' of ' + total + ' cases failed')),
			ts.map(one));
	});
	const failures = Object.keys(STANDING_RANK).map(k => {
		const ts = bad.filter(t => t.standing === k);
		if (!ts.length)
			return null;
		return h('div', { class: 'standing', 'data-standing': k },
			standing ? h('div', { class: 'standing-head' }, h('b', {}, ts.length + ' ' + STANDING_HEAD[k][ts.length === 1 ? 0 : 1])) : null,
			failuresOf(ts));
	});
	const passedGroups = grouped(good).map(([group, ts]) => {
		const suite = suiteOf(group) && ts.some(t => t.name !== group) ? group : null;
		return row([
			['Test', suite ? h('span', {}, h('b', {}, suite), ' ', h('span', { class: 'muted' }, ts.length + ' cases')) : group],
			['Passed', suite ? ts.map(t => caseName(t, suite)).join(', ') : '✓'],
		], { class: suite ? 'suite' : '', 'data-suite': suite || null });
	});
	return h('div', { class: 'results' },
		bad.length ? h('div', { class: 'failures' }, failures) : null,
		good.length ? h('details', { class: 'passed' },
			h('summary', {}, h('span', { class: 'count-pass' }, good.length + ' passed'),
				skipped.length ? ', ' + skipped.length + ' skipped' : ''),
			table(['Test', 'Passed'], passedGroups, 'tests passed-tests')) :
			(skipped.length && !bad.length ? h('p', { class: 'muted' }, skipped.length + ' skipped') : null));
}

/* A running step's progress: "candidate 12: building 120/654 objects (18%)". */
function progressBar(p) {
	if (!p)
		return null;
	const pct = p.total ? Math.min(100, Math.floor(p.done * 100 / p.total)) : null;
	const what = p.kind === 'bisection' && p.total ? `step ${p.done} of about ${p.total}` :
		p.total ? `${Math.min(p.done, p.total)}/${p.total} ${p.unit} (${pct}%)` : `${p.done} ${p.unit}`;
	return h('div', { class: 'pbar', 'data-kind': p.kind || '' },
		h('span', { class: 'plabel' }, p.label + ': ' + what),
		pct !== null ? h('progress', { class: 'ptrack', max: p.total, value: Math.min(p.done, p.total) }) : null);
}

/* Build coverage: one row per touched file (what built it, or why nothing did). */
function coverageFiles(files) {
	return table(['File', 'Coverage', 'Built by', 'Objects', 'Why / new warnings'], (files || []).map(f => row([
		['File', h('code', { class: 'file' }, f.path)],
		['Coverage', badge(f.status, f.status === 'booted' || f.status === 'compiled' ? 'good' : null)],
		['Built by', f.config || ''],
		['Objects', (f.objects || []).map(o => h('code', { class: 'file' }, o))],
		['Why / new warnings', [f.detail || '', f.warnings ? pre(f.warnings, 'warnings') : null]],
	])), 'coverage');
}

/* A coverage boot's count for one patch: "exercised 12 of 14 changed lines". */
function linesLine(l) {
	if (!l)
		return null;
	return h('div', { class: 'line lines' }, l.text,
		(l.files || []).map(f => h('div', { class: 'lines-file' }, h('code', { class: 'file' }, f.path), ': ',
			f.detail ? 'not counted: ' + f.detail
				: f.executed + ' of ' + f.executable + ' code lines ran' +
					((f.missed || []).length ? ' (not run: ' + f.missed.slice(0, 10).join(', ') + ')' : ''))));
}

function coverageBlock(cov) {
	if (!cov)
		return null;
	return h('div', { class: 'coverage' },
		h('p', { class: 'line cov-summary' }, cov.summary),
		cov.lines ? h('p', { class: 'line cov-lines' }, 'Coverage boot: ' + cov.lines.summary) : null,
		table(['Patch', 'Coverage', 'Lines run', 'Files'], (cov.patches || []).map(p => row([
			['Patch', patchLink(p.patch_id)],
			['Coverage', badge(p.status, p.status === 'booted' || p.status === 'compiled' ? 'good' : null)],
			['Lines run', p.lines ? p.lines.text : ''],
			['Files', coverageFiles(p.files)],
		])), 'coverage-patches'));
}

function candidateBlock(c) {
	const b = c.build;
	return h('div', { class: 'cand' },
		h('div', { class: 'line' },
			h('a', { href: '#/candidate/' + c.id }, 'candidate #' + c.id), ' ',
			h('span', { class: 'muted' }, c.purpose + ', ' + (c.patch_ids || []).length + ' patches, step ' + c.step + ' '),
			c.verdict ? badge(c.verdict) : badge('running'),
			c.detail && c.verdict !== 'fail' ? h('span', { class: 'why' }, ' ' + c.detail) : null),
		c.progress && !c.verdict ? progressBar({ kind: 'build', ...c.progress }) : null,
		phaseLine(c.phases, c.verdict ? null : c.estimate_left),
		c.summary ? h('div', { class: 'line verdict-summary' }, c.summary) : null,
		b && b.error_excerpt ? pre(b.error_excerpt) : null,
		(c.tests || []).length ? testResults(c.tests,
			c.standing && Object.keys(c.standing).length ? c.standing : null) : null,
		b ? h('div', { class: 'line sub' }, 'build #' + b.id + ' ', badge(b.result),
			b.cached ? ' from the build cache, no compile ' : (b.seconds ? ' ' + Number(b.seconds).toFixed(0) + ' s ' : ' '),
			c.boots ? '· ' + c.boots + ' boot' + (c.boots === 1 ? '' : 's') + ' ' : '',
			b.log_path ? h('a', { href: API + '/builds/' + b.id + '/log' }, 'log') : null) : null);
}

/* A candidate with a failing test, a failed build or a hang. */
function failed(c) {
	return ['fail', 'hang', 'build-failed'].includes(c.verdict);
}

/* The forms that change a patch: each needs a token. */
function actions(p) {
	const msg = h('p', { class: 'msg', role: 'alert' });
	const tok = h('input', { type: 'password', name: 'token', autocomplete: 'off', value: token(), placeholder: 'API token', required: true });
	const reason = h('textarea', { name: 'reason', rows: 2, required: true, placeholder: 'Why (the author reads this)' });

	async function act(ev, kind) {
		ev.preventDefault();
		const t = formToken(tok, msg);
		const r = reason.value.trim();
		if (!t)
			return;
		msg.className = 'msg';
		msg.textContent = 'Sending…';
		try {
			if (kind === 'plan') {
				const res = await post('/patches/' + p.id + '/revert', { dry_run: true }, t);
				msg.textContent = '';
				msg.append('Plan: ', ...(res.plan.items || []).map(i =>
					h('span', { class: 'plan' }, i.action + ' ', patchLink(i.patch_id), ' (' + i.why + ') ')));
				return;
			}
			if (!r) {
				msg.textContent = 'Say why: the reason is recorded and mailed.';
				msg.className = 'msg bad';
				return;
			}
			const body = kind === 'revert' ? { reason: r, dry_run: false } : { reason: r };
			await post('/patches/' + p.id + '/' + kind, body, t);
			msg.className = 'msg good';
			msg.textContent = 'Done.';
			reason.value = '';
			render(true);
		} catch (e) {
			msg.className = 'msg bad';
			msg.textContent = (e.status ? e.status + ': ' : '') + e.message;
		}
	}

	const canFlag = !['broken', 'dropped', 'reverted'].includes(p.state);
	const canOverride = ['held', 'checked'].includes(p.state);
	const canRevert = ['broken', 'released', 'queued', 'held', 'checked'].includes(p.state);
	return h('form', { class: 'act', id: 'flag-form', onsubmit: ev => act(ev, 'flag') },
		h('label', {}, 'Token', tok),
		h('label', {}, 'Reason', reason),
		h('div', { class: 'buttons' },
			canFlag ? h('button', { type: 'submit', class: 'danger', id: 'flag-button' }, 'Flag broken') : null,
			canOverride ? h('button', { type: 'button', onclick: ev => act(ev, 'override') }, 'Override (queue it)') : null,
			canRevert ? h('button', { type: 'button', onclick: ev => act(ev, 'plan') }, 'Revert plan (dry run)') : null,
			canRevert ? h('button', { type: 'button', class: 'danger', onclick: ev => act(ev, 'revert') }, 'Revert / drop now') : null),
		msg);
}

views.candidates = async () => {
	const { candidates } = await get(onBranch('/candidates?limit=100'));
	return [h('h1', {}, 'Candidates', selectedBranch() ? ' ' + selectedBranch() : ''), candidates.length ?
		table(['#', ...branchHead(), 'Purpose', 'Patches', 'Step', 'Verdict', 'Started'],
		candidates.map(c => row([
			['#', h('a', { href: '#/candidate/' + c.id }, '#' + c.id)], ...branchCol(c.branch),
			['Purpose', c.purpose], ['Patches', c.patches],
			['Step', c.step], ['Verdict', c.verdict ? badge(c.verdict) : badge(c.step === 'pending' ? 'pending' : 'running')],
			['Started', ago(c.started_at)]]))) : h('p', { class: 'empty' }, 'No candidate yet.')];
};

/* The matrix: one row per (arch, compiler) cell, the failing cell first (the API's order). */
function cellsBlock(cells) {
	return table(['Cell', 'Verdict', 'Tests', 'Candidate'], cells.map(x => row([
		['Cell', x.arch + '/' + x.compiler],
		['Verdict', x.not_run ? [badge('not run'), h('span', { class: 'why' }, ' ' + x.not_run)] :
			[badge(x.verdict || 'running'), x.detail && x.verdict !== 'pass' ? h('span', { class: 'why' }, ' ' + x.detail.split('\n')[0]) : null]],
		['Tests', String(x.tests || 0)],
		['Candidate', h('a', { href: '#/candidate/' + x.candidate }, '#' + x.candidate)]])), 'matrix');
}

views.candidate = async (args) => {
	const c = await get('/candidates/' + args.id);
	return [h('h1', {}, 'Candidate #' + c.id, c.branch ? [' ', h('span', { class: 'branch-tag' }, c.branch)] : null),
		c.headline ? h('p', { class: 'summary' }, c.headline) : null,
		(c.cells || []).length ? section('Matrix', cellsBlock(c.cells)) : null,
		section('Result', candidateBlock(c)),
		c.coverage ? section('Build coverage', coverageBlock(c.coverage)) : null,
		section('Patches', h('p', {}, (c.patch_ids || []).map(id => [patchLink(id), ' ']))),
	];
};

views.bisections = async () => {
	const { bisections } = await get(onBranch('/bisections?limit=100'));
	return [h('h1', {}, 'Bisections', selectedBranch() ? ' ' + selectedBranch() : ''), bisections.length ?
		table(['#', ...branchHead(), 'Candidate', 'State', 'Range', 'Culprit', 'Builds', 'Boots', 'Started'],
		bisections.map(b => row([
			['#', h('a', { href: '#/bisection/' + b.id }, '#' + b.id)], ...branchCol(b.branch), ['Candidate', h('a', { href: '#/candidate/' + b.candidate_id }, '#' + b.candidate_id)],
			['State', badge(b.state)], ['Range', range(b)],
			['Culprit', b.culprit_patch_id ? patchLink(b.culprit_patch_id, '#' + b.culprit_patch_id + ' ' + (b.culprit_subject || '')) : ''],
			['Builds', b.builds_used], ['Boots', b.boots_used], ['Started', ago(b.started_at)]]))) : h('p', { class: 'empty' }, 'No bisection yet.')];
};

views.bisection = async (args) => {
	const b = await get('/bisections/' + args.id);
	const c = await get('/candidates/' + b.candidate_id).catch(() => ({ patch_ids: [] }));
	const steps = b.steps || [];
	const ids = c.patch_ids || [];
	const n = Math.max(ids.length, b.bad || 0, ...steps.map(s => s.prefix_len || 0));
	/*
	 * One cell per queue prefix: 0 is the branch alone, i adds the i-th
	 * patch. Tried prefixes are green (pass) or red (fail); the rest take
	 * the colour the search implies; the culprit is outlined.
	 */
	const bar = h('div', { class: 'bar', title: 'queue prefixes: green passes, red fails' },
		Array.from({ length: n + 1 }, (_, i) => {
			const s = steps.filter(x => x.prefix_len === i).pop();
			const cls = s ? tone(s.result) : (i <= b.good ? 'good dim' : (b.bad !== null && i >= b.bad ? 'bad dim' : ''));
			const label = i === 0 ? 'branch' : (ids[i - 1] ? '#' + ids[i - 1] : String(i));
			const cell = h('span', { class: 'cell ' + cls + (b.bad === i && b.culprit_patch_id ? ' culprit' : ''),
				title: i === 0 ? 'the branch alone' : 'prefix ' + i + (s ? ': ' + s.result : '') }, label);
			return i > 0 && ids[i - 1] ? h('a', { href: '#/patch/' + ids[i - 1] }, cell) : cell;
		}));
	return [h('h1', {}, 'Bisection #' + b.id),
		h('div', { class: 'line' }, badge(b.state), ' of ', h('a', { href: '#/candidate/' + b.candidate_id }, 'candidate #' + b.candidate_id),
			b.culprit_patch_id ? [' · culprit ', patchLink(b.culprit_patch_id, '#' + b.culprit_patch_id + ' ' + (b.culprit_subject || ''))] : null,
			' · ' + (b.builds_used || 0) + ' builds, ' + (b.boots_used || 0) + ' boots',
			b.state === 'running' && b.steps_total ? ' · step ' + b.steps_done + ' of about ' + b.steps_total : '',
			b.detail ? h('span', { class: 'why' }, ' ' + b.detail) : null),
		section('Prefixes', bar, h('p', { class: 'muted' }, range(b))),
		section('Steps', steps.length ? table(['#', 'Kind', 'Prefix', 'Result', 'Candidate', 'When'], steps.map((s, i) => row([
			['#', i + 1], ['Kind', s.kind], ['Prefix', s.prefix_len], ['Result', badge(s.result)],
			['Candidate', s.candidate_id ? h('a', { href: '#/candidate/' + s.candidate_id }, '#' + s.candidate_id) : ''],
			['When', ago(s.created_at)]]))) : h('p', { class: 'muted' }, 'No step yet.')),
	];
};

views.reverts = async () => {
	const { reverts } = await get(onBranch('/reverts'));
	return [h('h1', {}, 'Reverts', selectedBranch() ? ' ' + selectedBranch() : ''), reverts.length ?
		table(['#', ...branchHead(), 'Patch', 'State', 'Patches', 'Reason', 'By', 'When'],
		reverts.map(r => row([
			['#', h('a', { href: '#/revert/' + r.id }, '#' + r.id)], ...branchCol(r.branch),
			['Patch', patchLink(r.patch_id, '#' + r.patch_id + ' ' + (r.subject || ''))], ['State', badge(r.state)],
			['Patches', Array.isArray(r.items) ? r.items.length : r.items],
			['Reason', r.reason], ['By', r.actor], ['When', ago(r.created_at)]]))) : h('p', { class: 'empty' }, 'Nothing was reverted.')];
};

views.revert = async (args) => {
	const r = await get('/reverts/' + args.id);
	return [h('h1', {}, 'Revert #' + r.id),
		h('div', { class: 'line' }, badge(r.state), ' of ', patchLink(r.patch_id), ' by ' + (r.actor || ''),
			h('span', { class: 'why' }, ' ' + (r.reason || ''))),
		section('Plan', table(['Order', 'Patch', 'Action', 'Why', 'Commit', 'Done'], (r.items || []).map((i, k) => row([
			['Order', i.ord === undefined ? k + 1 : i.ord], ['Patch', patchLink(i.patch_id, '#' + i.patch_id + ' ' + (i.subject || ''))],
			['Action', i.action], ['Why', i.why], ['Commit', i.revert_commit ? h('code', {}, i.revert_commit.slice(0, 12)) : ''],
			['Done', i.done ? '✓' : '']])))),
		(r.items || []).some(i => i.action === 'revert') ? h('p', {}, h('a', { href: API + '/reverts/' + r.id + '/patch' }, 'The revert patches (text/x-patch)')) : null,
	];
};

views.mail = async () => {
	const { mail } = await get(onBranch('/mail?limit=200'));
	return [h('h1', {}, 'Mail outbox', selectedBranch() ? ' ' + selectedBranch() : ''), heldNotice(mail), mail.length ?
		table(['#', ...branchHead(), 'Subject', 'To', 'Kind', 'State', 'Attempts', 'Last error', 'Created'],
		mail.map(m => row([
			['#', m.id], ...branchCol(m.branch), ['Subject', m.patch_id ? patchLink(m.patch_id, m.subject || '(no subject)') : (m.subject || '')],
			['To', (Array.isArray(m.rcpt_to) ? m.rcpt_to : []).join(', ')], ['Kind', m.kind],
			['State', m.hold ? badge('held', 'warn') : mailBadge(m.state)], ['Attempts', m.attempts],
			['Last error', m.hold || m.last_error || ''], ['Created', ago(m.created_at)]]))) : h('p', { class: 'empty' }, 'No mail.')];
};

/* One cell of the matrix: the fix's patch on a branch, its state and verdicts. */
function fixCell(c) {
	if (!c)
		return h('span', { class: 'muted nocell' }, 'not queued');
	const vs = c.verdicts || {};
	return h('div', { class: 'fixcell', 'data-state': c.state },
		h('div', { class: 'line' }, patchLink(c.id), ' ', stateBadge(c.state),
			/* the fix's own test passed without it: the bug is not in this tree */
			vs.test && vs.test.result === 'not-present' ? [' ', badge('bug not present', 'info')] : null,
			c.candidate ? h('a', { href: '#/candidate/' + c.candidate.id, class: 'cand-verdict' },
				badge(c.candidate.verdict || (c.candidate.step === 'pending' ? 'pending' : 'running')), ' #' + c.candidate.id) : null),
		Object.keys(vs).length ? h('span', { class: 'chips' }, Object.keys(vs).map(n => h('span', {
			class: 'chip ' + (n === 'flags' && vs[n].result !== 'none' ? 'info' : tone(vs[n].result)),
			title: n + ': ' + vs[n].result + (vs[n].detail ? ': ' + vs[n].detail : ''),
		}, h('b', {}, n), ' ', vs[n].result))) : h('span', { class: 'muted' }, 'not checked'),
		c.state_reason && ['rejected', 'held', 'broken', 'dropped'].includes(c.state) ?
			h('div', { class: 'why' }, c.state_reason) : null);
}

views.fixes = async (args) => {
	const offset = Number(args.offset || 0);
	const m = await get(onBranch('/fixes?' + new URLSearchParams({ limit: PAGE, offset })));
	const sel = selectedBranch();
	const rows = m.fixes.map(f => row([
		['Fix', h('div', {},
			h('span', { class: 'subject' }, f.subject),
			h('div', { class: 'sub' }, f.upstream ? 'upstream ' + f.upstream.slice(0, 12) : 'patch-id ' + String(f.patch_id).slice(0, 12)))],
		...m.branches.map(k => [k, fixCell(f.branches[k]), 'b-cell'])], { 'data-fix': f.fix }));
	const page = o => '#/fixes?' + new URLSearchParams({ offset: o });
	return [h('h1', {}, 'Fixes by branch', sel ? ' · on ' + sel : ''),
		h('p', { class: 'muted' }, 'One row per fix (the same upstream commit, else the same diff), one column per branch: ' +
			'the patch there, its state, each check\u2019s latest verdict (hover for the reason) and the newest candidate with it.'),
		m.fixes.length ? table(['Fix', ...m.branches], rows, 'fixes') :
			h('p', { class: 'empty' }, sel ? 'No fix is queued for ' + sel + '.' : 'No fix yet.'),
		h('div', { class: 'pager' },
			offset > 0 ? h('a', { href: page(Math.max(0, offset - PAGE)) }, '← previous') : null,
			h('span', { class: 'muted' }, m.total ? `${offset + 1}–${offset + m.fixes.length} of ${m.total} fixes` : ''),
			offset + PAGE < m.total ? h('a', { href: page(offset + PAGE) }, 'next →') : null)];
};

views.events = async () => {
	const { events } = await get('/events?limit=200');
	return [h('h1', {}, 'Events'), table(['#', 'When', 'Who', 'Subject', 'What'], events.slice().reverse().map(e => row([
		['#', e.id], ['When', when(e.at)], ['Who', e.actor],
		['Subject', e.subject_kind === 'patch' && e.subject_id ? patchLink(e.subject_id) : e.subject_kind + (e.subject_id ? ' #' + e.subject_id : '')],
		['What', e.kind + (e.detail ? ': ' + e.detail : '')]])))];
};

views.token = async () => {
	const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', value: token(), placeholder: '64 hex digits' });
	const msg = h('p', { class: 'msg' });
	return [h('h1', {}, 'API token'),
		h('form', {
			class: 'act', onsubmit: ev => {
				ev.preventDefault();
				setToken(input.value.trim());
				msg.textContent = input.value.trim() ? 'Saved in this browser.' : 'Forgotten.';
			},
		},
		h('p', {}, 'Writes (flag, revert, override, candidates) need a token: ', h('code', {}, 'stableq token add NAME'),
			'. It is kept in this browser’s localStorage and sent only with writes.'),
		h('label', {}, 'Token', input),
		h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Save')), msg)];
};

/* ---- routing and refresh ---- */

function parseHash() {
	const raw = location.hash.replace(/^#\/?/, '');
	const [path, query] = raw.split('?');
	const parts = path.split('/').filter(Boolean);
	const args = Object.fromEntries(new URLSearchParams(query || ''));
	const single = { patch: 1, candidate: 1, bisection: 1, revert: 1 };
	if (!parts.length)
		return { view: 'queue', args };
	if (single[parts[0]] && /^[1-9][0-9]*$/.test(parts[1] || ''))
		return { view: parts[0], args: { ...args, id: parts[1] } };
	return { view: views[parts[0]] ? parts[0] : 'notfound', args };
}

/* A tester's report as the list writes it: "Build results: total: 158 pass: 156 fail: 2". */
function reportLine(r) {
	const part = (title, k) => r[k + '_total'] === null || r[k + '_total'] === undefined ? null :
		title + ': total: ' + r[k + '_total'] + ' pass: ' + r[k + '_pass'] + ' fail: ' + r[k + '_fail'];
	const parts = [part('Build results', 'build'), part('Qemu test results', 'qemu')].filter(Boolean);
	return parts.length ? parts.join('; ') : (r.summary || '');
}

/* The -rc review cycle: the newest rc of the branch (its window, patches,
 * testers) and, with a token, the next one sent to the list. */
views.rc = async () => {
	let rc = null;
	try {
		rc = await get(onBranch('/rc'));
	} catch (e) {
		if (e.status !== 404)
			throw e;
	}
	const msg = h('span', { class: 'msg' });
	const tok = h('input', { type: 'password', name: 'token', autocomplete: 'off', value: token(), placeholder: 'API token', required: true });
	async function send(ev) {
		ev.preventDefault();
		const t = formToken(tok, msg);
		if (!t)
			return;
		try {
			const r = await post(onBranch('/rc'), {}, t);
			msg.className = 'msg good';
			msg.textContent = r.version + ': ' + r.patches.length + ' patches to the list.';
			render(true);
		} catch (e) {
			msg.className = 'msg bad';
			msg.textContent = (e.status ? e.status + ': ' : '') + e.message;
		}
	}
	const form = h('form', { class: 'act', id: 'rc-send', onsubmit: send },
		tok, h('button', { type: 'submit', id: 'send-rc' }, rc ? 'Send the next -rc' : 'Send an -rc'), msg);
	if (!rc)
		return [h('h1', {}, 'Review cycle'), h('p', { class: 'empty' }, 'No rc yet.'), form];
	return [h('h1', {}, 'Review cycle ', rc.version),
		h('div', { class: 'line' }, badge(rc.state), ' ', rc.window_open ? 'window open until ' : 'window closed at ',
			new Date(rc.deadline * 1000).toISOString()),
		section('Patches', table(['#', 'Patch', 'State'], rc.patches.map(p => row([
			['#', String(p.pos).padStart(2, '0')], ['Patch', patchLink(p.id, p.subject)],
			['State', p.stale ? [stateBadge(p.state), ' edited since: stale'] : stateBadge(p.state)]])))),
		rc.tag ? h('div', { class: 'line' }, 'Tag ', h('code', {}, rc.tag), rc.waiting ? ' \u00b7 ' + rc.waiting + ' queued patches wait for the next rc' : '') : '',
		section('Tested-by', rc.tested.length ? table(['Tester', 'Name'], rc.tested.map(t => row([
			['Tester', t.tester], ['Name', t.name || '']]))) : h('p', { class: 'empty' }, 'Nobody yet.')),
		/* every tester's report and NAK on the cover; which hold the release */
		section('Reports', (rc.reports || []).length ? table(['Tester', 'Kind', 'Report', 'Release'], rc.reports.map(r => row([
			['Tester', (r.name ? r.name + ' ' : '') + '<' + r.tester + '>'], ['Kind', r.kind + (r.tested ? ' (Tested-by)' : '')],
			['Report', reportLine(r)], ['Release', r.holds ? badge('holds the release') : '']]))) : h('p', { class: 'empty' }, 'No reports yet.')),
		rc.override ? h('div', { class: 'line' }, 'Overridden by ', rc.override.actor, ': ', rc.override.reason) : '',
		form];
};

views.notfound = async () => [h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to the queue'))];

let rendering = false;
let again = null; /* a render asked for while one ran: null, or its force */
let lastKey = '';

let lastHash = null;

/* A <details> is known across redraws by its class, its summary with the
 * numbers left out ("92 passed" may become "93 passed") and its place among
 * those alike: a refresh keeps open what the user opened. */
function detailsKeys(root) {
	const seen = new Map();
	return [...root.querySelectorAll('details')].map(d => {
		const s = d.querySelector(':scope > summary');
		const base = d.className + '|' + (s ? s.textContent.replace(/[0-9]+/g, '#') : '');
		const n = (seen.get(base) || 0) + 1;
		seen.set(base, n);
		return [d, base + '|' + n];
	});
}

function openDetails(root) {
	return new Set(detailsKeys(root).filter(([d]) => d.open).map(([, k]) => k));
}

/* Busy forms are not redrawn under the user's hands. */
function userBusy() {
	const a = document.activeElement;
	if (a && a.closest && a.closest('form'))
		return true;
	return [...document.querySelectorAll('#view textarea')].some(t => t.value.trim());
}

async function render(force) {
	if (rendering) {
		/* not dropped: a navigation during a refresh is drawn after it */
		again = again || !!force;
		return;
	}
	rendering = true;
	const { view, args } = parseHash();
	const main = document.getElementById('view');
	const nav = { patch: 'queue', candidate: 'candidates', bisection: 'bisections', revert: 'reverts' }[view] || view;
	document.querySelectorAll('#nav a').forEach(a => a.classList.toggle('on', a.dataset.view === nav));
	try {
		await loadBranches();
		const nodes = await views[view](args);
		const y = window.scrollY;
		const open = location.hash === lastHash ? openDetails(main) : new Set();
		main.replaceChildren(...[nodes].flat(Infinity).filter(Boolean));
		lastHash = location.hash;
		for (const [d, k] of detailsKeys(main))
			if (open.has(k))
				d.open = true;
		main.dataset.view = view;
		if (!force)
			window.scrollTo(0, y);
		document.title = 'stableq · ' + (main.querySelector('h1') ? main.querySelector('h1').textContent : view);
	} catch (e) {
		main.replaceChildren(h('h1', {}, 'Error'),
			h('p', { class: 'msg bad' }, (e.status ? e.status + ': ' : '') + e.message));
	}
	document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
	rendering = false;
	if (again !== null) {
		const f = again;
		again = null;
		render(f);
	}
}

/* Polls /health; redraws the view when something happened (a new event, a new step). */
async function poll() {
	const st = document.getElementById('status');
	try {
		const hl = await get('/health');
		const busy = hl.step && hl.step !== 'idle';
		st.className = 'status ' + (busy ? 'busy' : 'idle');
		st.textContent = busy ? '● ' + hl.step : '○ idle';
		const running = hl.candidate ? (hl.candidate.phases || []).filter(p => p.running).map(p => p.phase).join() : '';
		const key = hl.last_event_id + '/' + hl.step + '/' + (hl.candidate ? hl.candidate.step + running : '') + '/' +
			(hl.progress || []).map(p => p.kind + p.subject_id + ':' + p.done).join(',');
		if (key !== lastKey && lastKey && !userBusy())
			render(false);
		lastKey = key;
	} catch (e) {
		st.className = 'status down';
		st.textContent = 'daemon unreachable';
	}
	setTimeout(poll, POLL_MS);
}

window.addEventListener('hashchange', () => render(true));
window.addEventListener('DOMContentLoaded', () => {
	document.getElementById('branch').addEventListener('change', ev => {
		setSelectedBranch(ev.target.value);
		render(true);
	});
	render(true);
	poll();
});
