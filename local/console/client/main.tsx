/** Entry of the console's bundle: styles, then the app mounted on #app. */
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { adoptPageToken } from './api';
import { App } from './app';

adoptPageToken();
const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
