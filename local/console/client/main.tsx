/** Entry of the console's bundle: styles, then the app mounted on #app. */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { adoptPageToken } from './api';
import { App } from './app';
import { pageOf } from './pages';

adoptPageToken();
// The page's own data first: the relay answers the console's reads one at a time, in order.
pageOf(window.location.hash).entry.prefetch?.();
const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
