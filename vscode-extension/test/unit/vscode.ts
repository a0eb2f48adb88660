// A mocked `vscode` module: the parts of the API the extension uses, recording what the
// extension asks of the editor. `register.ts` makes `require('vscode')` resolve here.

export interface Shown {
  kind: 'error' | 'info' | 'warning';
  message: string;
  items: string[];
}

export const state = {
  shown: [] as Shown[],
  /** What the user "clicks" in the next notification. */
  pick: undefined as string | undefined,
  executed: [] as unknown[][],
  config: {} as Record<string, unknown>,
  output: [] as string[],
  outputShown: 0,
  statusItems: [] as StatusItem[],
  panels: [] as Panel[],
  files: [] as { path: string; fsPath: string }[],
  textDocuments: [] as unknown[],
};

export function reset(): void {
  state.shown = [];
  state.pick = undefined;
  state.executed = [];
  state.config = {};
  state.output = [];
  state.outputShown = 0;
  state.statusItems = [];
  state.panels = [];
  state.files = [];
  state.textDocuments = [];
  window.activeTextEditor = undefined;
}

class StatusItem {
  text = '';
  tooltip: unknown = '';
  command: unknown;
  name = '';
  visible = false;
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

class Panel {
  title: string;
  disposed = false;
  revealed = 0;
  private onDispose: (() => void)[] = [];
  webview = { html: '', cspSource: 'vscode-webview://mock' };
  constructor(
    readonly viewType: string,
    title: string,
    readonly options: unknown,
  ) {
    this.title = title;
  }
  reveal(): void {
    this.revealed++;
  }
  onDidDispose(f: () => void): { dispose(): void } {
    this.onDispose.push(f);
    return { dispose() {} };
  }
  dispose(): void {
    this.disposed = true;
    for (const f of this.onDispose) f();
  }
}

function show(kind: Shown['kind']) {
  return (message: string, ...items: string[]): Promise<string | undefined> => {
    state.shown.push({ kind, message, items });
    return Promise.resolve(state.pick);
  };
}

export const window = {
  activeTextEditor: undefined as unknown,
  createOutputChannel(_name: string) {
    return {
      appendLine(line: string) {
        state.output.push(line);
      },
      append(text: string) {
        state.output.push(text);
      },
      show() {
        state.outputShown++;
      },
      dispose() {},
    };
  },
  showErrorMessage: show('error'),
  showInformationMessage: show('info'),
  showWarningMessage: show('warning'),
  createStatusBarItem() {
    const s = new StatusItem();
    state.statusItems.push(s);
    return s;
  },
  createWebviewPanel(viewType: string, title: string, _column: unknown, options: unknown) {
    const p = new Panel(viewType, title, options);
    state.panels.push(p);
    return p;
  },
};

export const workspace = {
  workspaceFolders: undefined as unknown,
  get textDocuments() {
    return state.textDocuments;
  },
  getConfiguration(_section?: string) {
    return {
      get<T>(key: string, dflt?: T): T | undefined {
        const v = state.config[key];
        return (v === undefined ? dflt : v) as T | undefined;
      },
    };
  },
  async findFiles() {
    return state.files;
  },
};

export const commands = {
  async executeCommand(...args: unknown[]) {
    state.executed.push(args);
  },
};

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
}
