/**
 * The JupyterLab plugins of the labextension (its `extension` entry): the notebook bridge
 * (bridge.ts), Ask penguin (ask_penguin.ts) and the page's guard against meta refresh
 * (no_refresh.ts). The transcript renderer is the `mimeExtension` entry (index.ts).
 */

import { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { askPlugin } from './ask_penguin';
import bridgePlugin from './bridge';
import { noRefreshPlugin } from './no_refresh';

const plugins: JupyterFrontEndPlugin<void>[] = [noRefreshPlugin, bridgePlugin, askPlugin];

export default plugins;
