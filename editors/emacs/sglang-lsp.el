;;; sglang-lsp.el --- sglang-lsp with Eglot (built into Emacs 29+)  -*- lexical-binding: t; -*-

;; Put this in your init file (or load it). `M-x eglot' in a shell script or YAML file then
;; starts `sglang-lsp serve'; `eglot-ensure' in the mode hooks starts it automatically.
;;
;; Eglot runs one server per buffer: for these modes this entry takes the place of Eglot's
;; defaults (bash-language-server, yaml-language-server). The language ids are ones the server
;; knows (server/sglang_lsp/lsp/documents.py).

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '(((sh-mode :language-id "shellscript")
                  (bash-ts-mode :language-id "shellscript")
                  (yaml-mode :language-id "yaml")
                  (yaml-ts-mode :language-id "yaml")
                  (docker-compose-mode :language-id "dockercompose"))
                 . ("sglang-lsp" "serve"))))

;; Optional: start it whenever such a file is opened.
;; (add-hook 'sh-mode-hook #'eglot-ensure)
;; (add-hook 'yaml-ts-mode-hook #'eglot-ensure)

;;; sglang-lsp.el ends here
