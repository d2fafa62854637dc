import './styles.css'
import type { DemoContext, Panel } from './context.ts'
import { confirmations } from './confirmations.ts'
import { h, replace } from './dom.ts'
import { artifactViewer } from './panels/artifact-viewer.ts'
import { fileTree } from './panels/file-tree.ts'
import { createPanels } from './panels/index.ts'
import { resetControl } from './sample/reset-control.ts'
import { timeline } from './timeline.ts'
import type { ClientMode, ToolClient } from './tool-client.ts'
import { download, filesOfDrop, filesOfInput, zipOf } from './transfer.ts'
import type { ImportedFile, TabClient } from './tab-client.ts'

const params = new URLSearchParams(location.search)
const token = params.get('token') ?? ''
const serverAvailable = token !== '' && location.protocol.startsWith('http')

const app = document.getElementById('app')!
const dialog = confirmations()
const events = timeline()
const artifacts = artifactViewer()
events.onArtifact((uri, tool) => void artifacts.open(uri, tool))
const status = h('span', { id: 'status', 'aria-live': 'polite' })
const modeGroup = h('div', { class: 'modes', role: 'radiogroup', 'aria-label': 'Workspace' })
const tabTools = h('div', { class: 'row tab-only' })
const treeHost = h('div', { class: 'tree-host' })
const tabList = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Panels' })
const panelHost = h('div', { class: 'panels' })

let client: ToolClient | undefined
let unsubscribe: (() => void) | undefined

const modeButton = (mode: ClientMode, label: string, enabled: boolean) => {
  const input = h('input', {
    type: 'radio',
    name: 'mode',
    id: `mode-${mode}`,
    value: mode,
    disabled: !enabled,
    onchange: () => void start(mode),
  })
  return h(
    'label',
    {
      for: input.id,
      title: enabled ? undefined : 'Open the URL isoagent serve prints (it has ?token=)',
    },
    input,
    ' ',
    label,
  )
}
modeGroup.append(
  modeButton('tab', 'This tab', true),
  modeButton('server', 'Server', serverAvailable),
)

app.append(
  h('header', {}, h('h1', {}, 'isoagent'), modeGroup, status, tabTools),
  h(
    'main',
    { class: 'layout' },
    h('nav', { class: 'sidebar', 'aria-label': 'Files' }, h('h2', {}, 'Files'), treeHost),
    h('div', { class: 'center' }, tabList, panelHost),
    h('aside', { class: 'events', 'aria-label': 'Timeline' }, h('h2', {}, 'Timeline'), events.el),
  ),
  dialog.el,
  artifacts.el,
)

function showTab(panels: Panel[], id: string, focus = false) {
  for (const panel of panels) {
    const tab = document.getElementById(`tab-${panel.id}`)!
    const body = document.getElementById(`panel-${panel.id}`)!
    const selected = panel.id === id
    tab.setAttribute('aria-selected', String(selected))
    tab.tabIndex = selected ? 0 : -1
    body.hidden = !selected
    if (selected) {
      panel.onShow?.()
      if (focus) tab.focus()
    }
  }
}

function importControls(tab: TabClient, refresh: () => void, openReadme: () => void) {
  const run = async (files: ImportedFile[]) => {
    status.textContent = `Importing ${files.length} files…`
    const n = await tab.importFiles(files, (done) => {
      if (done % 25 === 0) status.textContent = `Imported ${done} of ${files.length}…`
    })
    status.textContent = `Imported ${n} files into this tab.`
    refresh()
  }
  const picker = (id: string, label: string, folder: boolean) => {
    const input = h('input', {
      type: 'file',
      id,
      multiple: true,
      class: 'visually-hidden',
      // The label is the one keyboard stop (Enter or Space opens the picker).
      tabindex: -1,
    })
    if (folder) input.setAttribute('webkitdirectory', '')
    input.addEventListener('change', async () => {
      if (input.files?.length) await run(await filesOfInput(input.files))
      input.value = ''
    })
    return h(
      'label',
      {
        class: 'button',
        for: id,
        tabindex: 0,
        onkeydown: (e: Event) => {
          if ((e as KeyboardEvent).key === 'Enter' || (e as KeyboardEvent).key === ' ') {
            e.preventDefault()
            input.click()
          }
        },
      },
      label,
      input,
    )
  }
  const exportButton = h(
    'button',
    {
      type: 'button',
      id: 'export-zip',
      onclick: async () => {
        const files = await tab.exportFiles()
        download(zipOf(files), 'isoagent-workspace.zip', 'application/zip')
        status.textContent = `Exported ${files.length} files.`
      },
    },
    'Export zip',
  )
  const reset = resetControl(async () => {
    status.textContent = 'Resetting the sample project…'
    const n = await tab.resetSample()
    status.textContent = `Reset: the sample project is back (${n} files, .git included).`
    refresh()
    openReadme()
  })
  replace(
    tabTools,
    picker('import-files', 'Import files', false),
    picker('import-folder', 'Import folder', true),
    exportButton,
    reset,
  )
  document.body.ondragover = (e) => e.preventDefault()
  document.body.ondrop = async (e) => {
    e.preventDefault()
    if (e.dataTransfer) await run(await filesOfDrop(e.dataTransfer))
  }
}

async function start(mode: ClientMode): Promise<void> {
  document.body.dataset.ready = ''
  unsubscribe?.()
  const old = client
  client = undefined
  await old?.close().catch(() => undefined)
  events.clear()
  replace(tabTools)
  document.body.ondrop = null
  ;(document.getElementById(`mode-${mode}`) as HTMLInputElement).checked = true
  params.set('mode', mode)
  history.replaceState(null, '', `?${params}`)
  status.textContent = mode === 'tab' ? 'Opening the workspace in this tab…' : 'Connecting…'
  let next: ToolClient
  let seeded = false
  try {
    if (mode === 'tab') {
      const { TabClient } = await import('./tab-client.ts')
      const tab = await TabClient.open()
      next = tab
      seeded = await tab.seedIfEmpty()
    } else {
      const { HttpClient } = await import('./http-client.ts')
      next = await HttpClient.open(location.href, token)
    }
  } catch (error) {
    status.textContent = `Could not open the ${mode} workspace: ${(error as Error).message}`
    return
  }
  client = next
  const tap = next.onEvent((event) => {
    events.add(event)
    if (event.type === 'confirmation_required')
      dialog.ask({
        id: event.confirmationId,
        callId: event.callId,
        toolName: event.toolName,
        args: event.args,
      })
  })
  unsubscribe = tap
  // Every result's projection evidence goes to the timeline, beside its call's end.
  const call = next.call.bind(next)
  next.call = async (name, args) => {
    const result = await call(name, args)
    events.evidence(result)
    return result
  }
  const tools = await next.tools()
  const names = new Set(tools.map((t) => t.name))
  const toolListeners: (() => void)[] = []
  const { file, all } = createPanels()
  const ctx: DemoContext = {
    client: next,
    tools,
    has: (name) => names.has(name),
    refreshTools: async () => {
      const now = await next.tools()
      tools.splice(0, tools.length, ...now)
      names.clear()
      for (const t of now) names.add(t.name)
      for (const listener of toolListeners) listener()
    },
    onToolsChanged: (listener) => void toolListeners.push(listener),
    openFile: (path, line) => {
      showTab(all, 'file')
      file.open(path, line)
    },
    refreshTree: () => tree.refresh(),
  }
  // The first listing opens README.md when there is one, so the editor is not empty.
  let opened = false
  const tree = fileTree(ctx, {
    emptyHint:
      mode === 'tab'
        ? 'This tab’s workspace is empty: Reset sample, import files or a folder, or drop them here.'
        : 'The server’s workspace is empty: create a file in the File panel.',
    onRootLoaded: (names) => {
      if (!opened && names.includes('README.md')) file.openFirst('README.md')
      opened = true
    },
  })
  replace(treeHost, tree.el)
  replace(tabList)
  replace(panelHost)
  for (const panel of all) {
    tabList.append(
      h(
        'button',
        {
          role: 'tab',
          id: `tab-${panel.id}`,
          'aria-controls': `panel-${panel.id}`,
          onclick: () => showTab(all, panel.id),
        },
        panel.title,
      ),
    )
    panelHost.append(
      h(
        'div',
        { role: 'tabpanel', id: `panel-${panel.id}`, 'aria-labelledby': `tab-${panel.id}` },
        panel.render(ctx),
      ),
    )
  }
  showTab(all, 'file')
  tabList.onkeydown = (e) => {
    const at = all.findIndex(
      (p) => document.getElementById(`tab-${p.id}`) === document.activeElement,
    )
    if (at < 0) return
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0
    if (step === 0) return
    e.preventDefault()
    showTab(all, all[(at + step + all.length) % all.length]!.id, true)
  }
  dialog.attach(next)
  artifacts.attach(next)
  if (mode === 'tab')
    importControls(
      next as TabClient,
      () => tree.refresh(),
      () => ctx.openFile('README.md'),
    )
  status.textContent =
    `Workspace: ${next.description} · ${tools.length} tools` +
    (seeded ? ' · first visit: the sample project (a git repository) was written here' : '')
  document.body.dataset.mode = mode
  document.body.dataset.ready = mode
  performance.mark('isoagent-ready')
}

const requested = params.get('mode')
void start(
  requested === 'server' && serverAvailable
    ? 'server'
    : requested === 'tab' || !serverAvailable
      ? 'tab'
      : 'server',
)
