/** Entry of the console's bundle: styles, then the app mounted on #app. */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { adoptPageToken } from './api';
import { earlyAnswered, prefetch } from './data';
import { num } from './format';
import { App } from './app';
import { pageOf } from './pages';

adoptPageToken();
// The page's own data first: the relay answers the console's reads one at a time, in order. Then
// the overview every page is drawn with, rather than once the shell has drawn and asked for it.
pageOf(window.location.hash).entry.prefetch?.();
prefetch('GET /overview', {});
// The browser's first number formatter starts its ICU (20-140 ms in Chromium): built while the relay
// answers, not while the first rows are drawn.
window.setTimeout(() => num(0), 0);

/** How long the first draw waits for the early answers: a slow relay gets its "Loading…" soon. */
const FIRST_DRAW_WAIT_MS = 1_000;

// Drawn with the answers in hand, the page shows its content in its first render; drawn before
// them, it shows "Loading…", then its content after a paint, an effect, a timer and two renders.
void Promise.race([earlyAnswered(), new Promise((resolve) => window.setTimeout(resolve, FIRST_DRAW_WAIT_MS))]).then(
  () => {
    const root = document.getElementById('app');
    if (!root) return;
    root.textContent = '';
    render(<App />, root);
  },
);
