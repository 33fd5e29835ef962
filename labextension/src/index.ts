/**
 * JupyterLab MIME renderer extension for penguin_jupyter transcripts.
 *
 * Registers a renderer for application/vnd.penguin.transcript+json (the static bundle a
 * finished %%penguin cell leaves behind). The grouping lives in model.ts, the DOM in render.ts.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { TranscriptWidget } from './render';

export const MIME_TYPE = 'application/vnd.penguin.transcript+json';

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new TranscriptWidget(options)
};

const extension: IRenderMime.IExtension = {
  id: 'penguin-jupyter:transcript',
  description: 'Renders penguin_jupyter transcripts: thinking, tool cards, diffs, subagents.',
  rendererFactory,
  rank: 40,
  dataType: 'json',
  fileTypes: [],
  documentWidgetFactoryOptions: []
};

export default extension;
