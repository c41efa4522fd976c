{{/* The server's name: every namespaced object of the release and the APIService's Service. */}}
{{- define "effectivepolicy.name" -}}effectivepolicy-apiserver{{- end -}}

{{- define "effectivepolicy.labels" -}}
app.kubernetes.io/part-of: effectivepolicy
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The pods' selector (the same as artifacts/, so a kustomize install can be taken over). */}}
{{- define "effectivepolicy.selectorLabels" -}}
app.kubernetes.io/name: effectivepolicy-apiserver
{{- end -}}

{{- define "effectivepolicy.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The serving certificate's Secret. */}}
{{- define "effectivepolicy.certSecret" -}}
{{- if eq .Values.certs.mode "existingSecret" -}}
{{ required "certs.existingSecret is required with certs.mode=existingSecret" .Values.certs.existingSecret }}
{{- else -}}
effectivepolicy-apiserver-serving-cert
{{- end -}}
{{- end -}}
