// webdriver.mjs: Debian's headless chromium driven through Debian's chromedriver
// (chromium-driver, the W3C WebDriver HTTP protocol), with nothing but what
// Debian's nodejs has built in (global fetch, Node >= 18). No npm module.
//
//	import { Browser } from './webdriver.mjs';
//	const b = await Browser.open({ width: 1280, height: 900 });
//	try { await b.goto(url); await b.waitFor('table tr'); ... } finally { await b.close(); }
//
// Elements are named by a "chain": a CSS selector, or an array of steps
// applied in turn: a CSS string (the matches under each element so far),
// a number (the nth element so far), or a filter {text: 's'} (those whose
// text contains s) / {has: chain} (those with a match of chain inside).
// Reading one element (text, attr, visible, box, click, fill, select) is
// strict: it waits for a match and fails when more than one matches.
// waitFor waits for a visible match, like a user would.
//
// The browser's console errors and uncaught exceptions (errors()) and every
// response the page got (responses()) come from chromedriver's browser and
// performance logs; close() stops the browser and chromedriver, also after
// a failure or a signal.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMEDRIVER = '/usr/bin/chromedriver';
const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';
const live = new Set();

// A signal (the test's timeout) still stops what was started.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
	process.on(sig, () => {
		for (const b of live)
			b.kill();
		process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[sig]);
	});
process.on('exit', () => { for (const b of live) b.kill(); });

// The page side of a chain: every element it names, in document order.
const RESOLVE = `function resolve(chain, from) {
	let cur = from || [document];
	for (const step of (Array.isArray(chain) ? chain : [chain])) {
		if (typeof step === 'string') {
			const seen = new Set();
			for (const el of cur)
				for (const m of el.querySelectorAll(step))
					seen.add(m);
			cur = [...seen].sort((a, b) => a === b ? 0 : a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
		} else if (typeof step === 'number') {
			cur = cur.length > step ? [cur[step]] : [];
		} else if (step && typeof step.text === 'string') {
			cur = cur.filter(el => el.textContent.replace(/\\s+/g, ' ').includes(step.text));
		} else if (step && step.has !== undefined) {
			cur = cur.filter(el => resolve(step.has, [el]).length > 0);
		} else {
			throw new Error('bad chain step ' + JSON.stringify(step));
		}
	}
	return cur;
}
function visible(el) {
	const r = el.getBoundingClientRect();
	return el.checkVisibility() && r.width > 0 && r.height > 0 && getComputedStyle(el).visibility === 'visible';
}`;

const show = chain => JSON.stringify(chain);

// The processes under pid, from /proc.
function descendants(pid) {
	const kids = new Map();
	for (const d of readdirSync('/proc')) {
		if (!/^\d+$/.test(d))
			continue;
		try {
			const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
			const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
			kids.set(ppid, [...(kids.get(ppid) || []), Number(d)]);
		} catch (e) {
			// gone meanwhile
		}
	}
	const out = [];
	for (let todo = [pid]; todo.length;) {
		const k = kids.get(todo.pop()) || [];
		out.push(...k);
		todo.push(...k);
	}
	return out;
}
const sleep = ms => new Promise(r => setTimeout(r, ms));

export class Browser {
	// Starts chromedriver on a free loopback port and a headless chromium session.
	static async open({ width = 1280, height = 900, timeout = 15000, args = [] } = {}) {
		const b = new Browser();
		b.timeout = timeout;
		b.profile = mkdtempSync(join(tmpdir(), 'stableq-chromium.'));
		live.add(b);
		try {
			await b.startDriver();
			const caps = {
				browserName: 'chrome',
				'goog:chromeOptions': {
					binary: CHROMIUM,
					args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', `--window-size=${width},${height}`,
						`--user-data-dir=${b.profile}`, '--no-first-run', '--disable-quic',
						'--disable-background-networking', '--disable-component-update', '--disable-sync', ...args],
				},
				'goog:loggingPrefs': { browser: 'ALL', performance: 'ALL' },
			};
			const s = await b.wd('POST', '/session', { capabilities: { alwaysMatch: caps } });
			b.session = s.sessionId;
			await b.setViewport(width, height);
			// what the browser did before (its new tab page) is not the test's
			await b.goto('about:blank');
			await b.pollLogs();
			b.browserLog = [];
			b.requests = new Map();
			b.responseLog = [];
		} catch (e) {
			await b.close();
			throw e;
		}
		return b;
	}

	startDriver() {
		return new Promise((resolve, reject) => {
			const p = spawn(CHROMEDRIVER, ['--port=0'], { stdio: ['ignore', 'pipe', 'pipe'] });
			this.driver = p;
			let out = '';
			const timer = setTimeout(() => reject(new Error('chromedriver did not start in 10 s: ' + out)), 10000);
			p.on('error', e => { clearTimeout(timer); reject(new Error(`cannot run ${CHROMEDRIVER} (Debian's chromium-driver): ${e.message}`)); });
			p.on('exit', code => { clearTimeout(timer); this.driver = null; reject(new Error(`chromedriver exited (${code}): ${out}`)); });
			p.stderr.on('data', d => { out += d; });
			p.stdout.on('data', d => {
				out += d;
				const m = /started successfully on port (\d+)/.exec(out);
				if (m && !this.url) {
					this.url = `http://127.0.0.1:${m[1]}`;
					clearTimeout(timer);
					resolve();
				}
			});
		});
	}

	// One WebDriver command; a WebDriver error becomes an exception naming it.
	async wd(method, path, body) {
		if (!this.url)
			throw new Error('chromedriver is not running');
		const full = path.startsWith('/session/') || path === '/session' ? path : `/session/${this.session}${path}`;
		const r = await fetch(this.url + full, {
			method,
			headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const j = await r.json().catch(() => ({ value: { error: 'not json', message: String(r.status) } }));
		if (!r.ok || (j.value && j.value.error)) {
			const e = new Error(`${method} ${full}: ${j.value.error}: ${(j.value.message || '').split('\n')[0]}`);
			e.wd = j.value.error;
			throw e;
		}
		return j.value;
	}

	cdp(cmd, params = {}) {
		return this.wd('POST', '/goog/cdp/execute', { cmd, params });
	}

	// Runs fn(...args) in the page (execute/sync); fn is a function or its
	// source, and may use resolve(chain) and visible(element).
	eval(fn, ...args) {
		return this.wd('POST', '/execute/sync', { script: `${RESOLVE}\nreturn (${fn}).apply(null, arguments);`, args });
	}

	// fn(elements, ...args) in the page with every element the chain names.
	evalAll(chain, fn, ...args) {
		return this.eval(`(chain, ...rest) => (${fn}).apply(null, [resolve(chain), ...rest])`, chain, ...args);
	}

	// Polls fn(...args) in the page until it is true; fails naming what after the deadline.
	async waitFn(fn, args = [], { timeout = this.timeout, what } = {}) {
		const end = Date.now() + timeout;
		let last;
		for (;;) {
			try {
				if (await this.eval(fn, ...args))
					return;
			} catch (e) {
				last = e;
			}
			if (Date.now() > end)
				throw new Error(`timed out after ${timeout} ms waiting for ${what || String(fn)}` + (last ? ` (last: ${last.message})` : ''));
			await sleep(50);
		}
	}

	// Waits for a visible element the chain names (state 'attached': any).
	async waitFor(chain, { timeout = this.timeout, state = 'visible' } = {}) {
		const end = Date.now() + timeout;
		for (;;) {
			const n = await this.evalAll(chain, (els, st) => els.filter(e => st !== 'visible' || visible(e)).length, state)
				.catch(e => { if (Date.now() > end) throw e; return 0; });
			if (n > 0)
				return;
			if (Date.now() > end)
				throw new Error(`timed out after ${timeout} ms waiting for ${state} ${show(chain)} on ${await this.url_().catch(() => '?')}`);
			await sleep(50);
		}
	}

	async goto(url) {
		await this.wd('POST', '/url', { url });
		await this.pollLogs(); // chromedriver keeps them until asked
	}

	url_() {
		return this.wd('GET', '/url');
	}

	currentUrl() {
		return this.url_();
	}

	count(chain) {
		return this.evalAll(chain, els => els.length);
	}

	// textContent of each element, as a list.
	texts(chain) {
		return this.evalAll(chain, els => els.map(e => e.textContent));
	}

	// The one element the chain names, as a WebDriver element (strict).
	async one(chain, { timeout = this.timeout } = {}) {
		const end = Date.now() + timeout;
		for (;;) {
			const els = await this.evalAll(chain, els => els);
			if (els.length > 1)
				throw new Error(`${show(chain)} names ${els.length} elements, not one`);
			if (els.length === 1)
				return els[0][ELEMENT];
			if (Date.now() > end)
				throw new Error(`timed out after ${timeout} ms waiting for ${show(chain)} on ${await this.url_().catch(() => '?')}`);
			await sleep(50);
		}
	}

	// fn(element, ...args) on the one element the chain names; found again
	// when the page redrew it between the finding and the call (a poll's
	// refresh), as a user's eyes would, until the deadline.
	async onEl(chain, fn, ...args) {
		const end = Date.now() + this.timeout;
		for (;;) {
			const id = await this.one(chain, { timeout: Math.max(0, end - Date.now()) });
			try {
				return await this.eval(fn, { [ELEMENT]: id }, ...args);
			} catch (e) {
				if (e.wd !== 'stale element reference' || Date.now() > end)
					throw e;
			}
			await sleep(50);
		}
	}

	innerText(chain) {
		return this.onEl(chain, el => el.innerText);
	}

	textContent(chain) {
		return this.onEl(chain, el => el.textContent);
	}

	attr(chain, name) {
		return this.onEl(chain, (el, n) => el.getAttribute(n), name);
	}

	// Does not wait: false when nothing matches, an error when more than one does.
	async visible(chain) {
		const n = await this.count(chain);
		if (n > 1)
			throw new Error(`${show(chain)} names ${n} elements, not one`);
		return n === 1 && this.onEl(chain, el => visible(el));
	}

	// {x, y, width, height} in page pixels, or null when not rendered.
	box(chain) {
		return this.onEl(chain, el => {
			const r = el.getBoundingClientRect();
			return r.width > 0 || r.height > 0 ? { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height } : null;
		});
	}

	// A real click (in the middle of the element, as a user's); retried
	// while it cannot be clicked yet, until the deadline.
	async click(chain, { timeout = this.timeout } = {}) {
		const end = Date.now() + timeout;
		for (;;) {
			try {
				const id = await this.one(chain, { timeout: Math.max(0, end - Date.now()) });
				// to the middle of the viewport, clear of a sticky header
				await this.eval(el => el.scrollIntoView({ block: 'center', inline: 'center' }), { [ELEMENT]: id });
				await this.wd('POST', `/element/${id}/click`, {});
				return;
			} catch (e) {
				const again = ['element not interactable', 'element click intercepted', 'stale element reference'].includes(e.wd);
				if (!again || Date.now() > end)
					throw new Error(`click ${show(chain)}: ${e.message}`);
			}
			await sleep(50);
		}
	}

	// Empties a field and types text into it.
	async fill(chain, text) {
		const id = await this.one(chain);
		await this.wd('POST', `/element/${id}/clear`, {});
		await this.wd('POST', `/element/${id}/value`, { text });
		const v = await this.onEl(chain, el => el.value);
		if (v !== text)
			throw new Error(`fill ${show(chain)}: it holds ${JSON.stringify(v)}`);
	}

	// Selects the option with this value of a <select> (input and change events, as a user's choice).
	async select(chain, value) {
		await this.one(chain);
		await this.waitFn((chain, v) => { const s = resolve(chain)[0]; return s && s.tagName === 'SELECT' && [...s.options].some(o => o.value === v); },
			[chain, value], { what: `option ${JSON.stringify(value)} of ${show(chain)}` });
		await this.onEl(chain, (s, v) => {
			s.value = v;
			s.dispatchEvent(new Event('input', { bubbles: true }));
			s.dispatchEvent(new Event('change', { bubbles: true }));
		}, value);
	}

	// The viewport (window.innerWidth x innerHeight), not just the window.
	async setViewport(width, height) {
		for (let i = 0; i < 3; i++) {
			const [w, h] = await this.eval(() => [innerWidth, innerHeight]);
			if (w === width && h === height)
				return;
			const r = await this.wd('GET', '/window/rect');
			await this.wd('POST', '/window/rect', { width: r.width + width - w, height: r.height + height - h });
		}
		const [w, h] = await this.eval(() => [innerWidth, innerHeight]);
		if (w !== width || h !== height)
			throw new Error(`the viewport is ${w}x${h}, not ${width}x${height}`);
	}

	// The whole page (beyond the viewport) as a PNG file.
	async screenshot(path) {
		const m = await this.cdp('Page.getLayoutMetrics');
		const c = m.cssContentSize || m.contentSize;
		const shot = await this.cdp('Page.captureScreenshot', {
			format: 'png', captureBeyondViewport: true,
			clip: { x: 0, y: 0, width: Math.ceil(c.width), height: Math.ceil(c.height), scale: 1 },
		});
		writeFileSync(path, Buffer.from(shot.data, 'base64'));
	}

	// The logs so far (chromedriver hands each entry out once).
	async pollLogs() {
		this.browserLog = this.browserLog || [];
		this.requests = this.requests || new Map();
		this.responseLog = this.responseLog || [];
		this.browserLog.push(...await this.wd('POST', '/se/log', { type: 'browser' }));
		for (const e of await this.wd('POST', '/se/log', { type: 'performance' })) {
			const { method, params } = JSON.parse(e.message).message;
			if (method === 'Network.requestWillBeSent')
				this.requests.set(params.requestId, { url: params.request.url, method: params.request.method });
			else if (method === 'Network.responseReceived')
				this.responseLog.push({ url: params.response.url, status: params.response.status,
					method: (this.requests.get(params.requestId) || {}).method || '?' });
		}
	}

	// Console errors and uncaught exceptions, but the browser's own
	// "Failed to load resource" lines (judge those by responses()).
	async errors() {
		await this.pollLogs();
		return this.browserLog.filter(e => e.level === 'SEVERE' &&
			!(e.source === 'network' && e.message.includes('Failed to load resource'))).map(e => e.message);
	}

	// Every response the page got: {url, status, method}.
	async responses() {
		await this.pollLogs();
		return this.responseLog;
	}

	// Every URL the page requested.
	async requested() {
		await this.pollLogs();
		return [...this.requests.values()].map(r => r.url);
	}

	// chromedriver and every process under it (the browser), at once.
	kill() {
		if (this.driver) {
			for (const pid of [this.driver.pid, ...descendants(this.driver.pid)]) {
				try {
					process.kill(pid, 'SIGKILL');
				} catch (e) {
					// gone already
				}
			}
		}
		this.driver = null;
		if (this.profile)
			rmSync(this.profile, { recursive: true, force: true });
		this.profile = null;
		live.delete(this);
	}

	// Ends the session (the browser quits), then chromedriver.
	async close() {
		if (this.session && this.driver) {
			try {
				await this.wd('DELETE', `/session/${this.session}`);
			} catch (e) {
				// the kill below still ends them
			}
		}
		this.session = null;
		if (this.driver) {
			const p = this.driver;
			const gone = new Promise(r => p.once('exit', r));
			p.kill('SIGTERM');
			await Promise.race([gone, sleep(3000)]);
		}
		this.kill();
	}
}

// HTTP from the page's origin (where playwright had page.request): plain fetch.
// A kept-alive socket the server closed hangs up: once more on a new one.
export async function request(method, url, { headers = {}, data } = {}) {
	const go = h => fetch(url, { method, headers: h, body: data });
	try {
		return await go(headers);
	} catch (e) {
		return go({ ...headers, Connection: 'close' });
	}
}
