/**
 * The JupyterLab plugins of the labextension (its `extension` entry): the notebook bridge
 * (bridge.ts) and Ask penguin (ask_penguin.ts). The transcript renderer is the `mimeExtension`
 * entry (index.ts).
 */

import { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { askPlugin } from './ask_penguin';
import bridgePlugin from './bridge';

const plugins: JupyterFrontEndPlugin<void>[] = [bridgePlugin, askPlugin];

export default plugins;
