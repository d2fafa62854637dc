// `@aws-sdk/xml-builder` for the Worker bundle (wrangler.toml [alias]). Bundlers that honour the
// package's "browser" field swap its XML parser for one over DOMParser, which workerd lacks;
// this re-exports the package with its own plain-JavaScript parser.
export { XmlNode } from '@aws-sdk/xml-builder/dist-es/XmlNode.js'
export { XmlText } from '@aws-sdk/xml-builder/dist-es/XmlText.js'
export { parseXML } from '@aws-sdk/xml-builder/dist-es/xml-parser.js'
